import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { ARCHIVE_STEPS, type ArchiveStep, archiveAuditLog } from '../audit/archiving/audit-archiver.js';
import { archiveFileName } from '../audit/archiving/audit-archiver-service.js';
import { governanceKeepers } from '../governance/archive-keepers.js';
import { openAuditBackend } from './audit-backend.js';
import { parseCommandLine, requireFlags, runCommand, UsageError } from './command-line.js';
import { parseServeOptions, type ServeOptions } from './serve-options.js';

const HELP = `Usage: arbiter audit archive --before TIME --out FILE|DIR/ [storage options]

Archives the oldest audit entries: those up to the newest checkpoint taken before TIME
are written to FILE (JSON Lines, as GET /api/v1/audit/export writes them), the file is
verified, and only then are they removed from the log, which keeps verifying from that
checkpoint on. With DIR/ (an existing folder) the file is named after its seq range.
A decision still waiting for review is never archived: the cut stops before the oldest
(it stays reviewable and expires as usual). The configuration the archived entries
recorded is carried past the cut first (config.snapshot entries), so a restart does
not record unchanged objects again.
Killed at any point, nothing is lost: run it again with the same TIME to finish.
Verify archives offline with: arbiter audit verify ARCHIVE... [RETAINED_EXPORT]

The log is the one arbiter serve uses with the same storage options:
  --data-dir DIR           the embedded file log (default: ./.arbiter-data); the
                           server must be stopped (or use POST /api/v1/audit/archive)
  --redis URL              the Redis stream (serving replicas may keep running)
  --kubernetes | --kubeconfig FILE
                           with --redis in a cluster: the checkpoints' ConfigMap
  --lease-namespace NS, --checkpoint-configmap NAME
                           where that ConfigMap is (as for arbiter serve)
  --pending-ttl SECONDS    the server's, if above 604800: how old a waiting decision may be

Exit status: 0 archived (or nothing due), 1 failed, 2 usage error.
`;

/** Flags that mean what they mean to arbiter serve. */
const SERVE_FLAGS = [
  'data-dir',
  'redis',
  'kubeconfig',
  'lease-namespace',
  'checkpoint-configmap',
  'pending-ttl',
] as const;

interface ArchiveArgs {
  before: Date;
  out: string;
  serveOptions: ServeOptions;
  crashAfter: ArchiveStep | undefined;
}

/** The command line, or 'help'; a UsageError when it is wrong. */
function parseArchiveArgs(argv: string[], env: NodeJS.ProcessEnv): ArchiveArgs | 'help' {
  const { values } = parseCommandLine(
    argv,
    {
      before: { type: 'string' },
      out: { type: 'string' },
      kubernetes: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      'data-dir': { type: 'string' },
      redis: { type: 'string' },
      kubeconfig: { type: 'string' },
      'lease-namespace': { type: 'string' },
      'checkpoint-configmap': { type: 'string' },
      'pending-ttl': { type: 'string' },
    },
    'none',
  );
  if (values.help) return 'help';
  const before = new Date(values.before ?? Number.NaN);
  const crashAfter = env.ARBITER_ARCHIVE_CRASH_AFTER as ArchiveStep | undefined;
  if (Number.isNaN(before.getTime())) throw new UsageError('--before TIME (ISO 8601) is required');
  requireFlags(values, ['out']);
  if (crashAfter !== undefined && !ARCHIVE_STEPS.includes(crashAfter))
    throw new UsageError(`ARBITER_ARCHIVE_CRASH_AFTER must be one of ${ARCHIVE_STEPS.join(', ')}`);
  const passed = SERVE_FLAGS.flatMap((flag) =>
    values[flag] === undefined ? [] : [`--${flag}`, values[flag]],
  );
  // Parsed by arbiter serve's own parser: the same meaning, the same defaults.
  const serveOptions = parseServeOptions(
    ['--api-keys', '-', ...passed, ...(values.kubernetes ? ['--kubernetes'] : [])],
    env,
  ) as ServeOptions; // not 'help': no --help among them
  return { before, out: values.out, serveOptions, crashAfter };
}

/**
 * `arbiter audit archive`. ARBITER_ARCHIVE_CRASH_AFTER=STEP kills the process after a
 * step: the crash-safety tests use it.
 */
export function runAuditArchive(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return runCommand(
    HELP,
    () => parseArchiveArgs(argv, env),
    (args) => archive(args, env),
  );
}

async function archive(
  { before, out, serveOptions, crashAfter }: ArchiveArgs,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const logger = pino({ level: env.ARBITER_LOG_LEVEL ?? 'warn' }, pino.destination(2));
  const intoFolder = out.endsWith('/') || (await isFolder(out));
  if (intoFolder) await mkdir(out, { recursive: true });
  // Never the leader: this process writes no checkpoints into a shared log.
  const log = await openAuditBackend(serveOptions, logger, () => false);
  try {
    const result = await archiveAuditLog(log, {
      before,
      actor: 'arbiter audit archive',
      keepers: governanceKeepers(log, () => new Date(), serveOptions.pendingTtlSeconds),
      path: (range) => (intoFolder ? join(out, archiveFileName(range)) : out),
      onStep: (step, archive) => {
        process.stderr.write(`${step}: ${archive.file} (seq ${archive.from_seq}..${archive.to_seq})\n`);
        if (step === crashAfter) process.kill(process.pid, 'SIGKILL');
      },
    });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    process.stderr.write(`${result.message}; the log now holds seq ${result.retained.from_seq} on\n`);
    return 0;
  } finally {
    await log.close();
  }
}

async function isFolder(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
