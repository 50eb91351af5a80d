import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createInterface } from 'node:readline';
import type { Checkpoint } from '../audit/audit-log.js';
import { isCheckpoint } from '../audit/checkpoint-shape.js';
import { verifyExportStream } from '../audit/export-verify.js';

const HELP = `Usage: arbiter audit verify FILE [--checkpoint FILE]

Verifies an audit export (JSON Lines, as GET /api/v1/audit/export writes it) offline:
every entry's hash, the links between entries, gap-free seq, and, with --checkpoint,
that the chain passes through the checkpointed hashes (a checkpoints.json of the data
directory, a ConfigMap's data, or one checkpoint object).
Exit status: 0 verified, 1 broken, 2 usage error.
`;

function checkpointsOf(document: unknown): Checkpoint[] {
  const object = document as { checkpoints?: unknown } | null;
  const list: unknown[] = Array.isArray(document)
    ? document
    : Array.isArray(object?.checkpoints)
      ? object.checkpoints
      : [document];
  if (list.length === 0 || !list.every(isCheckpoint)) {
    throw new Error('the checkpoint file holds no valid checkpoints ({seq, hash, entry_id, time})');
  }
  return list;
}

export async function runAuditVerify(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { checkpoint: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help || positionals.length !== 1) {
    process.stdout.write(HELP);
    return values.help ? 0 : 2;
  }
  const checkpoints = values.checkpoint
    ? checkpointsOf(JSON.parse(await readFile(values.checkpoint, 'utf8')))
    : [];
  const lines = createInterface({ input: createReadStream(positionals[0]!), crlfDelay: Infinity });
  const report = await verifyExportStream(lines, { checkpoints });
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  process.stderr.write(
    report.ok
      ? `verified: ${report.entries_checked} entries, head seq ${report.head.seq}\n`
      : `BROKEN at seq ${report.break?.seq}: ${report.break?.reason}\n`,
  );
  return report.ok ? 0 : 1;
}
