import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { AuditEntry, AuditEventInput, RetentionAnchor } from '../audit-log.js';
import type { AuditLogger } from '../audit-logger.js';
import { sealEntry, storedText } from '../chain.js';
import { EntryIndex } from './entry-index.js';
import { FileAuditLog, AUDIT_LOG_FILE, type FileAuditLogOptions } from './file-audit-log.js';
import { openLogFile, type LogFile } from './log-file.js';

/** Shared by the file backend's tests (not part of the public surface). */

/** `event` whose data is canonical when first read (append()'s check) and a BigInt after (sealing). */
export function changingEvent(event: AuditEventInput): AuditEventInput {
  let reads = 0;
  return Object.defineProperty({ ...event }, 'data', {
    enumerable: true,
    get: () => ((reads += 1) === 1 ? {} : { amount: 1n }),
  });
}

export function event(overrides: Partial<AuditEventInput> = {}): AuditEventInput {
  return {
    event_type: 'governance.decision',
    timestamp: '2025-01-01T00:00:00.000Z',
    actor_id: 'agent-1',
    capability: 'db.read',
    outcome: 'ALLOW',
    risk_score: 0.2,
    decision_id: 'dec-1',
    policies_evaluated: [],
    policy_matched: null,
    data: {},
    ...overrides,
  };
}

/** The retention anchor an archive run ending at this entry records. */
export function anchorAt(entry: AuditEntry, archive = 'audit-a.jsonl'): RetentionAnchor {
  return {
    seq: entry.seq,
    hash: entry.hash,
    entry_id: entry.id,
    checkpoint_time: '2025-01-02T00:00:00.000Z',
    archived_at: '2025-01-03T00:00:00.000Z',
    archive,
  };
}

/** n linked entries sealed as the log seals them, ids e-1..e-n; `at(i)` varies entry i's event. */
export function sealedChain(n: number, at: (i: number) => Partial<AuditEventInput>): AuditEntry[] {
  const entries: AuditEntry[] = [];
  for (let i = 1; i <= n; i += 1) {
    entries.push(sealEntry({ ...event(at(i)), id: `e-${i}` }, entries.at(-1) ?? null));
  }
  return entries;
}

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'arbiter-audit-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export function openLog(dir: string, options: Partial<FileAuditLogOptions> = {}): Promise<FileAuditLog> {
  return FileAuditLog.open({
    dir,
    checkpointEvery: { entries: 1000, seconds: 3600 },
    retainCheckpoints: 10,
    ...options,
  });
}

export async function readLogLines(dir: string): Promise<string[]> {
  const text = await readFile(join(dir, AUDIT_LOG_FILE), 'utf8');
  return text.split('\n');
}

export async function writeLogText(dir: string, text: string): Promise<void> {
  await writeFile(join(dir, AUDIT_LOG_FILE), text, 'utf8');
}

export interface FileProbe {
  readBytes: number;
  writes: number;
  syncs: number;
  truncates: number;
  failNextWrite: boolean;
  failNextSync: boolean;
  failNextTruncate: boolean;
}

/** Wraps the file named `fileName` (the log by default) to count and fail its I/O; others open as usual. */
export function probedFile(probe: FileProbe, fileName = AUDIT_LOG_FILE): (path: string) => Promise<LogFile> {
  return probedFiles({ [fileName]: probe });
}

/** Wraps each file named in `probes` (by base name) to count and fail its I/O; others open as usual. */
export function probedFiles(probes: Record<string, FileProbe>): (path: string) => Promise<LogFile> {
  return async (path) => {
    const real = await openLogFile(path);
    const probe = probes[basename(path)];
    if (!probe) return real;
    return {
      ...real,
      read: async (length, position) => {
        const data = await real.read(length, position);
        probe.readBytes += data.length;
        return data;
      },
      write: async (data, position) => {
        probe.writes += 1;
        if (probe.failNextWrite) {
          probe.failNextWrite = false;
          // A partial write first, as a full disk produces: the log must cut it off.
          await real.write(data.subarray(0, Math.floor(data.length / 2)), position);
          throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
        }
        await real.write(data, position);
      },
      sync: async () => {
        probe.syncs += 1;
        if (probe.failNextSync) {
          probe.failNextSync = false;
          throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
        }
        await real.sync();
      },
      truncate: async (length) => {
        probe.truncates += 1;
        if (probe.failNextTruncate) {
          probe.failNextTruncate = false;
          throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
        }
        await real.truncate(length);
      },
    };
  };
}

export function newProbe(): FileProbe {
  return {
    readBytes: 0,
    writes: 0,
    syncs: 0,
    truncates: 0,
    failNextWrite: false,
    failNextSync: false,
    failNextTruncate: false,
  };
}

export interface RecordedRead {
  position: number;
  length: number;
}

/** Wraps a real log file to record each read it is asked for. */
export function recordingReads(real: LogFile): { file: LogFile; reads: RecordedRead[] } {
  const reads: RecordedRead[] = [];
  const file: LogFile = {
    ...real,
    read: (length, position) => {
      reads.push({ position, length });
      return real.read(length, position);
    },
  };
  return { file, reads };
}

/**
 * Writes the entries as the log's lines to a real file at path and indexes `indexed` (the
 * entries the log believes are there, the written ones by default), as the log would.
 */
export async function writeIndexedLines(
  path: string,
  written: AuditEntry[],
  indexed: AuditEntry[] = written,
): Promise<EntryIndex> {
  const lines = written.map((e) => storedText(e));
  await writeFile(path, lines.map((l) => `${l}\n`).join(''));
  const index = new EntryIndex();
  let offset = 0;
  indexed.forEach((e, i) => {
    const length = Buffer.byteLength(lines[i]!);
    index.add(e, offset, length);
    offset += length + 1;
  });
  return index;
}

export interface Logged {
  level: 'info' | 'warn' | 'error';
  details: object;
  message: string;
}

/** A logger that keeps what it is told, in order, with its level. */
export function recordingLogger(): { logged: Logged[]; logger: AuditLogger } {
  const logged: Logged[] = [];
  const note =
    (level: Logged['level']) =>
    (details: object, message: string): void =>
      void logged.push({ level, details, message });
  return { logged, logger: { info: note('info'), warn: note('warn'), error: note('error') } };
}
