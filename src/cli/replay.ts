import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parseEntryLine } from '../audit/entry-shape.js';
import { checkManifests, formatFinding } from '../policy-tools/manifest-findings.js';
import { DecisionReplay, type ReplayReport } from '../policy-tools/replay.js';
import type { IndexSnapshot } from '../index/index.js';
import { readLocatedManifests } from '../sources/located-manifests.js';
import { parseCommandLine, runCommand, UsageError } from './command-line.js';

const HELP = `Usage: arbiter replay EXPORT.jsonl --manifests DIR [--fail-on-loosen] [-o text|json]
                      [--default-outcome ALLOW|DENY]

Re-decides every governance.decision of an audit export (GET /api/v1/audit/export) at its
recorded time and risk threshold under the configuration in DIR, and prints which
outcomes would change: the transition matrix (DENY -> ALLOW: 3 ...), most frequent first,
with up to five decision ids each. Decisions whose outcome depended on a rate-limit counter or a review
(a confirmation token, an approved Kubernetes request) are counted apart.

  --manifests DIR         the configuration to replay under (files or folders; repeatable)
  --fail-on-loosen        exit 1 when any outcome becomes less restrictive
                          (DENY > ESCALATE > REQUIRE_CONFIRMATION > ALLOW)
  --default-outcome O     the server's --default-outcome (default: ALLOW)
  -o json                 the report as JSON
Exit status: 0 done, 1 loosened with --fail-on-loosen, 2 usage error or invalid manifests.
`;

interface ReplayOptions {
  exportFile: string;
  manifests: string[];
  failOnLoosen: boolean;
  defaultOutcome: 'ALLOW' | 'DENY';
  output: 'text' | 'json';
}

export function runReplay(argv: string[]): Promise<number> {
  return runCommand(HELP, () => parseOptions(argv), replay);
}

async function replay(options: ReplayOptions): Promise<number> {
  const snapshot = await configuration(options.manifests);
  if (!snapshot) return 2;
  const decisions = new DecisionReplay(snapshot, options.defaultOutcome);
  let unreadable = 0;
  for await (const line of createInterface({
    input: createReadStream(options.exportFile),
    crlfDelay: Infinity,
  })) {
    if (line.trim() === '') continue;
    const entry = parseEntryLine(line);
    if (entry.kind === 'entry') decisions.add(entry.entry);
    else unreadable += 1;
  }
  const report = decisions.report();
  process.stdout.write(
    options.output === 'json'
      ? `${JSON.stringify({ ...report, unreadable_lines: unreadable }, null, 2)}\n`
      : text(report, unreadable),
  );
  return options.failOnLoosen && report.transitions.some((t) => t.loosens) ? 1 : 0;
}

async function parseOptions(argv: string[]): Promise<ReplayOptions | 'help'> {
  const { values, positionals } = parseCommandLine(argv, {
    manifests: { type: 'string', multiple: true },
    'fail-on-loosen': { type: 'boolean', default: false },
    'default-outcome': { type: 'string', default: 'ALLOW' },
    output: { type: 'string', short: 'o', default: 'text' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return 'help';
  if (positionals.length !== 1) throw new UsageError('name one audit export (JSON Lines)');
  if (!values.manifests?.length) throw new UsageError('--manifests DIR is required');
  const defaultOutcome = values['default-outcome'].toUpperCase();
  if (defaultOutcome !== 'ALLOW' && defaultOutcome !== 'DENY')
    throw new UsageError('--default-outcome must be ALLOW or DENY');
  if (values.output !== 'text' && values.output !== 'json')
    throw new UsageError(`-o must be text or json, not ${values.output}`);
  const exportFile = positionals[0]!;
  await access(exportFile).catch(() => {
    throw new UsageError(`${exportFile}: no such file`);
  });
  return {
    exportFile,
    manifests: values.manifests,
    failOnLoosen: values['fail-on-loosen'],
    defaultOutcome,
    output: values.output,
  };
}

/** The index of the manifests, or undefined (after saying why) when they are invalid. */
async function configuration(paths: string[]): Promise<IndexSnapshot | undefined> {
  let read;
  try {
    read = await readLocatedManifests(paths);
  } catch (err) {
    process.stderr.write(`arbiter replay: ${(err as Error).message}\n`);
    return undefined;
  }
  const { findings, snapshot } = checkManifests(read.objects, read.problems);
  const errors = findings.filter((f) => f.severity === 'error');
  if (errors.length === 0) return snapshot;
  const lines = errors.map((f) => `  ${formatFinding(f)}`);
  process.stderr.write(`arbiter replay: the manifests are invalid:\n${lines.join('\n')}\n`);
  return undefined;
}

function text(report: ReplayReport, unreadable: number): string {
  const lines = [`replayed ${report.replayed} decision(s): ${report.unchanged} unchanged`];
  for (const t of report.transitions)
    lines.push(
      `${t.from} -> ${t.to}${t.tier ? ` (${t.tier} tier)` : ''}: ${t.count}${t.loosens ? ' (loosens)' : ''}  ${t.decisionIds.join(' ')}`,
    );
  lines.push(
    `not replayed: ${report.apart.rateLimited} depended on a rate limit, ${report.apart.reviewed} on a review, ${report.apart.masked} on masked parameters`,
  );
  if (unreadable > 0) lines.push(`${unreadable} line(s) of the export are not audit entries`);
  return `${lines.join('\n')}\n`;
}
