import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { parseEntryLine } from '../audit/entry-shape.js';
import { checkManifests } from '../policy-tools/manifest-findings.js';
import { DecisionReplay, type ReplayReport } from '../policy-tools/replay.js';
import { readLocatedManifests } from '../sources/located-manifests.js';

const HELP = `Usage: arbiter replay EXPORT.jsonl --manifests DIR [--fail-on-loosen] [-o text|json]
                      [--default-outcome ALLOW|DENY]

Re-decides every governance.decision of an audit export (GET /api/v1/audit/export) at its
recorded time and risk threshold under the configuration in DIR, and prints which
outcomes would change: the transition matrix (DENY -> ALLOW: 3 ...) with up to five
decision ids each. Decisions whose outcome depended on a rate-limit counter or a review
(a confirmation token, an approved Kubernetes request) are counted apart.

  --manifests DIR         the configuration to replay under (files or folders; repeatable)
  --fail-on-loosen        exit 1 when any outcome becomes less restrictive
                          (DENY > ESCALATE > REQUIRE_CONFIRMATION > ALLOW)
  --default-outcome O     the server's --default-outcome (default: ALLOW)
  -o json                 the report as JSON
Exit status: 0 done, 1 loosened with --fail-on-loosen, 2 usage error or invalid manifests.
`;

export async function runReplay(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        manifests: { type: 'string', multiple: true },
        'fail-on-loosen': { type: 'boolean', default: false },
        'default-outcome': { type: 'string', default: 'ALLOW' },
        output: { type: 'string', short: 'o', default: 'text' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    return usage((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (positionals.length !== 1) return usage('name one audit export (JSON Lines)');
  if (!values.manifests?.length) return usage('--manifests DIR is required');
  const defaultOutcome = values['default-outcome'].toUpperCase();
  if (defaultOutcome !== 'ALLOW' && defaultOutcome !== 'DENY')
    return usage('--default-outcome must be ALLOW or DENY');
  if (values.output !== 'text' && values.output !== 'json')
    return usage(`-o must be text or json, not ${values.output}`);
  const exportFile = positionals[0]!;
  try {
    await access(exportFile);
  } catch {
    return usage(`${exportFile}: no such file`);
  }
  let read;
  try {
    read = await readLocatedManifests(values.manifests);
  } catch (err) {
    return usage((err as Error).message);
  }
  const { findings, snapshot } = checkManifests(read.objects, read.problems);
  const errors = findings.filter((f) => f.severity === 'error');
  if (errors.length > 0) {
    process.stderr.write(
      `arbiter replay: the manifests are invalid:\n${errors.map((f) => `  ${f.file}:${f.line}: ${f.object ? `${f.object}: ` : ''}${f.message}`).join('\n')}\n`,
    );
    return 2;
  }
  const replay = new DecisionReplay(snapshot, defaultOutcome);
  let unreadable = 0;
  for await (const line of createInterface({ input: createReadStream(exportFile), crlfDelay: Infinity })) {
    if (line.trim() === '') continue;
    const entry = parseEntryLine(line);
    if (entry.kind === 'entry') replay.add(entry.entry);
    else unreadable += 1;
  }
  const report = replay.report();
  process.stdout.write(
    values.output === 'json'
      ? `${JSON.stringify({ ...report, unreadable_lines: unreadable }, null, 2)}\n`
      : text(report, unreadable),
  );
  return values['fail-on-loosen'] && report.transitions.some((t) => t.loosens) ? 1 : 0;
}

function text(report: ReplayReport, unreadable: number): string {
  const lines = [`replayed ${report.replayed} decision(s): ${report.unchanged} unchanged`];
  for (const t of report.transitions)
    lines.push(
      `${t.from} -> ${t.to}: ${t.count}${t.loosens ? ' (loosens)' : ''}  ${t.decisionIds.join(' ')}`,
    );
  lines.push(
    `not replayed: ${report.apart.rateLimited} depended on a rate limit, ${report.apart.reviewed} on a review`,
  );
  if (unreadable > 0) lines.push(`${unreadable} line(s) of the export are not audit entries`);
  return `${lines.join('\n')}\n`;
}

function usage(message: string): number {
  process.stderr.write(`arbiter replay: ${message}\n\n${HELP}`);
  return 2;
}
