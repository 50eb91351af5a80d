import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Checkpoint } from '../audit/audit-log.js';
import { isCheckpoint } from '../audit/checkpoint-shape.js';
import { type LineVerifyReport, verifyExportStream } from '../audit/export-verify.js';
import { verifierKeyArg } from './verifier-key-arg.js';
import { parseCommandLine, runCommand, UsageError } from './command-line.js';
import { SignedRootChecker, type SignedRootReport } from '../audit/signed-root-check.js';

const HELP = `Usage: arbiter audit verify FILE... [--checkpoint FILE [--vkey VKEY]]

Verifies an audit export (JSON Lines, as GET /api/v1/audit/export writes it) offline:
every entry's hash, the links between entries, gap-free seq, and, with --checkpoint,
that the chain passes through the checkpointed hashes (a checkpoints.json of the data
directory, a ConfigMap's data, or one checkpoint object). With --vkey (the log's verifier
key, type 0x01, or a file holding it; not a witness's), each signed checkpoint's signature
is checked and the Merkle root of the export is recomputed at its size (an export from
seq 1).
Several FILEs are one chain in their order (an archive, then the next archive or the
retained log): each must continue the one before, entry to entry.
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

interface VerifyOptions {
  files: string[];
  checkpoint: string | undefined;
  vkey: string | undefined;
}

export function runAuditVerify(argv: string[]): Promise<number> {
  return runCommand(HELP, () => parseOptions(argv), verify);
}

function parseOptions(argv: string[]): VerifyOptions | 'help' {
  const { values, positionals } = parseCommandLine(argv, {
    checkpoint: { type: 'string' },
    vkey: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return 'help';
  if (positionals.length === 0) throw new UsageError('name at least one audit export (FILE...)');
  if (values.vkey && !values.checkpoint)
    throw new UsageError('--vkey needs --checkpoint FILE holding the signed checkpoints');
  return { files: positionals, checkpoint: values.checkpoint, vkey: values.vkey };
}

async function verify(options: VerifyOptions): Promise<number> {
  const checkpoints = options.checkpoint ? checkpointsOf(await readJson(options.checkpoint)) : [];
  const roots = await rootChecker(options.vkey, checkpoints);
  const files = new FileLines(options.files);
  const report = await verifyExportStream(
    teeLines(files.lines(), (line) => roots?.pushLine(line)),
    { checkpoints },
  );
  return summarize(report, roots?.finish(), files);
}

async function readJson(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${file} is not JSON`);
  }
}

/** The lines of several files as one stream, remembering where each file starts. */
class FileLines {
  private readonly starts: Array<{ file: string; firstLine: number }> = [];
  private count = 0;

  constructor(private readonly files: readonly string[]) {}

  async *lines(): AsyncIterable<string> {
    for (const file of this.files) {
      this.starts.push({ file, firstLine: this.count + 1 });
      for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
        this.count += 1;
        yield line;
      }
    }
  }

  /** `FILE line N` for a line number of the whole stream. */
  place(line: number): string {
    const start = [...this.starts].reverse().find((s) => s.firstLine <= line);
    return start ? `${start.file} line ${line - start.firstLine + 1}` : `line ${line}`;
  }
}

/** Prints the reports and says what holds; exit 1 on the first thing that does not. */
function summarize(report: LineVerifyReport, roots: SignedRootReport | undefined, files: FileLines): number {
  process.stdout.write(`${JSON.stringify(roots ? { ...report, signed_roots: roots } : report, null, 2)}\n`);
  if (!report.ok) {
    const where = report.break?.line === undefined ? '' : ` (${files.place(report.break.line)})`;
    process.stderr.write(`BROKEN at seq ${report.break?.seq}${where}: ${report.break?.reason}\n`);
    return 1;
  }
  if (roots && !roots.ok) {
    process.stderr.write(`BROKEN: signed checkpoint at size ${roots.break?.size}: ${roots.break?.reason}\n`);
    return 1;
  }
  const signed = roots ? `, ${roots.signed_checkpoints_checked} signed roots` : '';
  process.stderr.write(`verified: ${report.entries_checked} entries, head seq ${report.head.seq}${signed}\n`);
  return 0;
}

/** With --vkey: a checker of the signed roots in the checkpoint file. */
async function rootChecker(
  vkey: string | undefined,
  checkpoints: Checkpoint[],
): Promise<SignedRootChecker | undefined> {
  if (vkey === undefined) return undefined;
  return new SignedRootChecker(
    await verifierKeyArg(vkey, { flag: '--vkey', role: 'log' }),
    checkpoints.flatMap((c) => (c.note ? [c.note] : [])),
  );
}

/** The same lines, each also handed to `visit` as it passes. */
async function* teeLines(lines: AsyncIterable<string>, visit: (line: string) => void): AsyncIterable<string> {
  for await (const line of lines) {
    visit(line);
    yield line;
  }
}
