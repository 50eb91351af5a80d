import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AuditUnavailableError, randomUuid } from '../../model/index.js';
import type {
  AuditEntry,
  AuditEventInput,
  AuditLog,
  AuditPage,
  AuditQuery,
  ChainHead,
  Checkpoint,
  CheckpointStore,
  RetainedRange,
  RetentionAnchor,
} from '../audit-log.js';
import { type AuditTree, StoredAuditTree } from '../audit-tree.js';
import { CheckpointSigner, type CheckpointSigning } from '../checkpoint-signer.js';
import { GENESIS_HASH, sealForStorage, type SealedEntry } from '../chain.js';
import { auditEventRefusal } from '../event-check.js';
import type { LineVerifyReport } from '../export-verify.js';
import { silentLogger, type AuditLogger } from '../audit-logger.js';
import { FileCheckpointStore } from './checkpoint-store.js';
import { Checkpointer, type CheckpointEvery, type HeadSnapshot } from './checkpointer.js';
import type { EntryIndex } from './entry-index.js';
import { readEntries } from './entry-reader.js';
import { verifyLogFile } from './file-verify.js';
import { GroupCommit } from './group-commit.js';
import { openLogFile, type LogFile, type OpenLogFile } from './log-file.js';
import { loadLog, type LoadedLog } from './log-loader.js';
import { LogLock } from './log-lock.js';
import { checkAnchorEntry, checkAnchorFollows, checkAnchorShape, treeBehind } from '../retention-refusals.js';
import { RangeVerifier } from './range-verifier.js';
import { RETAINED_COPY_FILE, RetainedCopy, retainedStart } from './retained-copy.js';
import { RetentionFile } from './retention-file.js';
import { catchUpTree } from './tree-catch-up.js';
import { TREE_FILE, TreeFile } from './tree-file.js';

export const AUDIT_LOG_FILE = 'audit.jsonl';

export interface FileAuditLogOptions {
  /** Directory of audit.jsonl and checkpoints.json; created if missing. */
  dir: string;
  checkpointEvery: CheckpointEvery;
  /** Newest checkpoints kept in checkpoints.json. */
  retainCheckpoints: number;
  logger?: AuditLogger;
  /** Clock for checkpoint times and cache ages; entry timestamps are the caller's. */
  now?: () => Date;
  idGenerator?: () => string;
  /** Most entries one write+fsync carries (default 1000). */
  maxBatchEntries?: number;
  /** How long a successful isVerified range is reused before it is read again (default 60). */
  verifyCacheSeconds?: number;
  /** Test seam: how the log file is opened (wrap it to count fsyncs or inject failures). */
  openFile?: OpenLogFile;
  /** Defaults to a FileCheckpointStore in dir. */
  checkpointStore?: CheckpointStore;
  /** Signs checkpoints of the Merkle tree (C2SP checkpoints) when set. */
  signing?: CheckpointSigning;
  /** Bench seam: append the chain alone, no Merkle tree (what the tree costs an append). */
  withoutTree?: boolean;
}

const DEFAULTS = { maxBatchEntries: 1000, verifyCacheSeconds: 60 };

interface LogParts {
  dir: string;
  openFile: OpenLogFile;
  lock: LogLock;
  retention: RetentionFile;
  anchor: RetentionAnchor | null;
  file: LogFile;
  tree: TreeFile;
  loaded: LoadedLog;
  store: CheckpointStore;
  initialCheckpoints: Checkpoint[];
  logger: AuditLogger;
  now: () => Date;
  verifyCacheMs: number;
  newId: () => string;
  maxBatchEntries: number;
  checkpointEvery: CheckpointEvery;
  signing: CheckpointSigning | undefined;
  withoutTree: boolean;
}

/**
 * The embedded audit log: an append-only JSON Lines file, one entry per line, hash-chained.
 * Appends are group-committed (one write+fsync per batch) and resolve only once durable.
 * Queries use in-memory indexes; entries are read back from the file.
 */
export class FileAuditLog implements AuditLog {
  private readonly listeners = new Set<(entry: AuditEntry) => void>();
  private readonly commits: GroupCommit<AuditEventInput, AuditEntry>;
  private closing: Promise<void> | undefined;
  /** A failed write whose truncation also failed leaves bytes to cut before the next write. */
  private dirtyTail = false;

  // The file, its index and length are replaced together when archived entries are cut off.
  private file: LogFile;
  private index: EntryIndex;
  private length: number;
  private ranges: RangeVerifier;
  /** Files replaced by a trim: reads begun before it finish on them; closed with the log. */
  private readonly replacedFiles: LogFile[] = [];
  /** Where the file starts: entries up to this anchor were archived and cut off. */
  private anchor: RetentionAnchor | null;
  private trimming: Promise<void> | undefined;
  private readonly treeFile: TreeFile;
  private last: HeadSnapshot | undefined;
  private readonly checkpointStore: CheckpointStore;
  private readonly checkpointer: Checkpointer;
  private readonly logger: AuditLogger;
  private readonly now: () => Date;
  private readonly verifyCacheMs: number;
  private readonly dir: string;
  private readonly openFile: OpenLogFile;
  private readonly lock: LogLock;
  private readonly retention: RetentionFile;
  private readonly newId: () => string;
  private readonly withoutTree: boolean;

  private constructor(parts: LogParts) {
    this.dir = parts.dir;
    this.openFile = parts.openFile;
    this.lock = parts.lock;
    this.retention = parts.retention;
    this.anchor = parts.anchor;
    this.file = parts.file;
    this.treeFile = parts.tree;
    this.index = parts.loaded.index;
    this.length = parts.loaded.length;
    // A log whose every entry was archived continues from its anchor.
    this.last = parts.loaded.head ?? (parts.anchor ? headOf(parts.anchor) : undefined);
    this.checkpointStore = parts.store;
    this.logger = parts.logger;
    this.now = parts.now;
    this.verifyCacheMs = parts.verifyCacheMs;
    this.newId = parts.newId;
    this.withoutTree = parts.withoutTree;
    this.ranges = this.rangeVerifier();
    this.ranges.setKnownBreak(parts.loaded.report.break?.seq);
    const headSeq = this.last?.seq ?? 0;
    const checkpointed = parts.initialCheckpoints.filter((c) => c.seq <= headSeq).at(-1)?.seq ?? 0;
    this.checkpointer = new Checkpointer(
      parts.store,
      parts.checkpointEvery,
      () => this.last,
      parts.now,
      parts.logger,
      checkpointed,
      parts.signing && new CheckpointSigner(parts.signing, new StoredAuditTree(parts.tree)),
      () => parts.tree.sync(),
    );
    this.commits = new GroupCommit((batch) => this.writeBatch(batch), parts.maxBatchEntries);
  }

  static async open(options: FileAuditLogOptions): Promise<FileAuditLog> {
    const settings = { ...DEFAULTS, ...options };
    const logger = settings.logger ?? silentLogger;
    const now = settings.now ?? (() => new Date());
    const openFile = settings.openFile ?? openLogFile;
    await mkdir(settings.dir, { recursive: true });
    const lock = await LogLock.acquire(settings.dir);
    try {
      const store =
        settings.checkpointStore ??
        new FileCheckpointStore({ dir: settings.dir, retain: settings.retainCheckpoints });
      const retention = new RetentionFile(settings.dir);
      const anchor = await retention.read();
      const initialCheckpoints = await store.list();
      const file = await openWithoutArchived(settings.dir, openFile, anchor, logger);
      // Checkpoints before the anchor are never consulted: the chain is read from the anchor on.
      const loaded = await loadLog(file, initialCheckpoints, logger, anchor ?? undefined);
      if (!loaded.report.ok) {
        logger.error(
          { break: loaded.report.break },
          'audit chain is broken; new entries continue from the last one',
        );
      }
      const tree = await openTree({ ...settings, logger }, file, loaded, initialCheckpoints, anchor);
      const log = new FileAuditLog({
        dir: settings.dir,
        openFile,
        lock,
        retention,
        anchor,
        file,
        tree,
        loaded,
        store,
        initialCheckpoints,
        logger,
        now,
        verifyCacheMs: settings.verifyCacheSeconds * 1000,
        newId: settings.idGenerator ?? (() => `aud_${randomUuid()}`),
        maxBatchEntries: settings.maxBatchEntries,
        checkpointEvery: settings.checkpointEvery,
        signing: settings.signing,
        withoutTree: settings.withoutTree ?? false,
      });
      log.checkpointer.start();
      return log;
    } catch (err) {
      await lock.release();
      throw err;
    }
  }

  append(event: AuditEventInput): Promise<AuditEntry> {
    if (this.closed) return Promise.reject(new AuditUnavailableError('the audit log is closed'));
    const refusal = auditEventRefusal(event);
    if (refusal) return Promise.reject(refusal);
    return this.commits.submit(event);
  }

  async query(query: AuditQuery): Promise<AuditPage> {
    const plan = this.index.plan(query);
    const entries = await readEntries(this.file, this.index, plan.positions);
    return { entries, total: plan.total, next: plan.more ? (entries.at(-1)?.seq ?? null) : null };
  }

  async get(id: string): Promise<AuditEntry | undefined> {
    const position = this.index.positionOfId(id);
    if (position === undefined) return undefined;
    const [entry] = await readEntries(this.file, this.index, [position]);
    return entry;
  }

  byDecision(decisionId: string): Promise<AuditEntry[]> {
    return readEntries(this.file, this.index, this.index.positionsOf('decision_id', decisionId));
  }

  isVerified(seq: number): Promise<boolean> {
    return this.ranges.isVerified(seq, this.last?.seq ?? 0);
  }

  /** Re-reads and verifies the whole file against every checkpoint. */
  async verify(): Promise<LineVerifyReport> {
    // Checkpoints first: each names a head committed before the snapshot taken next, so
    // one beyond the snapshot can only mean a truncated log, never a concurrent append.
    const checkpoints = await this.checkpointStore.list();
    // Head and length together, synchronously: both describe the same committed prefix.
    const head = this.currentHead();
    const anchor = this.anchor;
    const report = await verifyLogFile(this.file, this.length, head, checkpoints, anchor ?? undefined);
    this.ranges.setKnownBreak(report.break?.seq);
    return { ...report, retained: rangeOf(anchor) };
  }

  retained(): Promise<RetainedRange> {
    return Promise.resolve(rangeOf(this.anchor));
  }

  /**
   * Records the anchor in retention.json, then cuts the entries up to it off the file
   * (RetainedCopy). One trim at a time; a rerun after a crash finishes the cut, as does
   * the next open.
   */
  trim(anchor: RetentionAnchor): Promise<void> {
    if (this.closed) return Promise.reject(new AuditUnavailableError('the audit log is closed'));
    const run = (this.trimming ?? Promise.resolve()).then(() => this.trimNow(anchor));
    this.trimming = run.catch(() => undefined);
    return run;
  }

  private async trimNow(anchor: RetentionAnchor): Promise<void> {
    checkAnchorShape(anchor);
    const recorded = await this.retention.read();
    checkAnchorFollows(anchor, recorded);
    if (!recorded || recorded.seq < anchor.seq) {
      await this.checkAnchorStored(anchor);
      await this.retention.write(anchor);
    }
    await this.cutArchived(recorded && recorded.seq === anchor.seq ? recorded : anchor);
  }

  /** The anchor must be an entry this log holds, hashed into the Merkle tree already. */
  private async checkAnchorStored(anchor: RetentionAnchor): Promise<void> {
    const position = this.index.positionOfSeq(anchor.seq);
    const [entry] = position === undefined ? [] : await readEntries(this.file, this.index, [position]);
    checkAnchorEntry(anchor, entry);
    if (!this.withoutTree && this.treeFile.size < anchor.seq) throw treeBehind(anchor);
  }

  private async cutArchived(anchor: RetentionAnchor): Promise<void> {
    const position = this.index.positionOfSeq(anchor.seq);
    if (position === undefined) return; // cut already
    const { offset, length } = this.index.location(position);
    const copy = await RetainedCopy.begin({
      dir: this.dir,
      target: join(this.dir, AUDIT_LOG_FILE),
      source: () => this.file,
      cut: offset + length + 1,
      openFile: this.openFile,
    });
    try {
      // Most of the copy while appends go on; the rest with the writer paused.
      await copy.copyUpTo(this.length);
      await this.commits.exclusive(async () => {
        await copy.copyUpTo(this.length);
        const file = await copy.replace();
        this.replacedFiles.push(this.file);
        this.file = file;
        this.index = copy.index;
        this.length = copy.length;
        this.anchor = anchor;
        this.ranges = this.rangeVerifier();
      });
    } catch (err) {
      await copy.discard().catch(() => undefined);
      throw err;
    }
    await copy.syncDirectory();
    this.logger.info(
      { anchor_seq: anchor.seq, archive: anchor.archive, retained_from: anchor.seq + 1 },
      'archived audit entries cut off the log',
    );
  }

  private rangeVerifier(): RangeVerifier {
    return new RangeVerifier({
      file: this.file,
      index: this.index,
      checkpoints: () => this.checkpointStore.list(),
      now: this.now,
      cacheMs: this.verifyCacheMs,
      logger: this.logger,
      ...(this.anchor ? { anchor: headOf(this.anchor) } : {}),
    });
  }

  head(): Promise<ChainHead> {
    return Promise.resolve(this.currentHead());
  }

  checkpoints(): Promise<Checkpoint[]> {
    return this.checkpointStore.list();
  }

  /** The Merkle tree over the entries, read from audit.tree. */
  tree(): AuditTree {
    return new StoredAuditTree(this.treeFile);
  }

  private currentHead(): ChainHead {
    return this.last ? { seq: this.last.seq, hash: this.last.hash } : { seq: 0, hash: GENESIS_HASH };
  }

  subscribe(listener: (entry: AuditEntry) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private get closed(): boolean {
    return this.closing !== undefined;
  }

  /** Writes what is queued and lets the lock go; a second call waits for the first. */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    await this.trimming;
    await this.commits.drain();
    await this.checkpointer.stop();
    await this.file.close();
    for (const file of this.replacedFiles) await file.close();
    await this.treeFile.close();
    await this.lock.release();
  }

  /** One write and one fsync for the whole batch; on failure nothing of it remains. */
  private async writeBatch(events: AuditEventInput[]): Promise<AuditEntry[]> {
    let previous: { seq: number; hash: string } | null = this.last ?? null;
    const sealed = events.map((event) => {
      const next = sealForStorage(event, this.newId(), previous);
      previous = next.entry;
      return next;
    });
    const entries = sealed.map((s) => s.entry);
    const stored = sealed.map((s) => s.stored);
    const data = jsonLines(stored);
    const treeBefore = this.treeFile.size;
    try {
      if (this.dirtyTail) await this.cutTail();
      // The two files are written side by side; a failure undoes both. Only the log is
      // synced here: the tree is synced before each checkpoint, and what it held past the
      // last one is hashed again from the log at the next start (tree-catch-up.ts).
      await Promise.all([this.file.write(data, this.length), this.appendToTree(sealed)]);
      await this.file.sync();
    } catch (err) {
      await this.rollback(treeBefore);
      throw new AuditUnavailableError('the audit log could not store the entries', { cause: err });
    }
    this.commit(entries, stored);
    return entries;
  }

  /** Leaf index = seq - 1: a tree that lost step with the log (a gap at open) is left as it is. */
  private async appendToTree(sealed: SealedEntry[]): Promise<void> {
    if (this.withoutTree || this.treeFile.size !== sealed[0]!.entry.seq - 1) return;
    await this.treeFile.append(sealed.map((s) => s.leaf));
  }

  /** `stored`: each entry's bytes as written, without its newline. */
  private commit(entries: AuditEntry[], stored: Buffer[]): void {
    entries.forEach((entry, i) => {
      const length = stored[i]!.length;
      this.index.add(entry, this.length, length);
      this.length += length + 1;
    });
    const newest = entries.at(-1)!;
    this.last = { seq: newest.seq, hash: newest.hash, entry_id: newest.id };
    for (const entry of entries) this.notify(entry);
    this.checkpointer.afterAppend(this.last);
  }

  private notify(entry: AuditEntry): void {
    for (const listener of this.listeners) {
      try {
        listener(entry);
      } catch (err) {
        this.logger.warn({ err, seq: entry.seq }, 'audit subscriber threw; ignored');
      }
    }
  }

  private async cutTail(): Promise<void> {
    await this.file.truncate(this.length);
    await this.file.sync();
    this.dirtyTail = false;
  }

  private async rollback(treeLeaves: number): Promise<void> {
    try {
      await this.treeFile.truncateTo(treeLeaves);
    } catch (err) {
      this.logger.error(
        { err },
        'audit tree file could not be cut back after a failed write; the next append overwrites its records past the end',
      );
    }
    try {
      await this.cutTail();
    } catch (err) {
      this.dirtyTail = true;
      this.logger.error(
        { err },
        'audit log could not truncate a failed write; retrying before the next write',
      );
    }
  }
}

/** Entries' stored bytes as JSON Lines: one buffer, one newline after each. */
function jsonLines(stored: readonly Buffer[]): Buffer {
  let size = 0;
  for (const bytes of stored) size += bytes.length + 1;
  const data = Buffer.allocUnsafe(size);
  let offset = 0;
  for (const bytes of stored) {
    offset += bytes.copy(data, offset);
    data[offset++] = 0x0a;
  }
  return data;
}

/** Opens audit.tree and brings it level with the loaded log. */
async function openTree(
  settings: { dir: string; openFile?: OpenLogFile; logger: AuditLogger },
  file: LogFile,
  loaded: LoadedLog,
  checkpoints: readonly Checkpoint[],
  anchor: RetentionAnchor | null,
): Promise<TreeFile> {
  const tree = await TreeFile.open(await (settings.openFile ?? openLogFile)(join(settings.dir, TREE_FILE)));
  await catchUpTree({
    tree,
    file,
    index: loaded.index,
    logLeaves: loaded.head?.seq ?? anchor?.seq ?? 0,
    // The anchor was in the tree before anything was cut: archived leaves are never re-hashed.
    checkpointed: Math.max(checkpoints.at(-1)?.seq ?? 0, anchor?.seq ?? 0),
    logger: settings.logger,
  });
  return tree;
}

function headOf(anchor: RetentionAnchor): HeadSnapshot {
  return { seq: anchor.seq, hash: anchor.hash, entry_id: anchor.entry_id };
}

function rangeOf(anchor: RetentionAnchor | null): RetainedRange {
  return { from_seq: (anchor?.seq ?? 0) + 1, anchor };
}

/**
 * Opens audit.jsonl, first finishing a cut that a crash interrupted: the anchor was
 * recorded (so the archive was complete and verified) but the file still holds entries
 * up to it.
 */
async function openWithoutArchived(
  dir: string,
  openFile: OpenLogFile,
  anchor: RetentionAnchor | null,
  logger: AuditLogger,
): Promise<LogFile> {
  const path = join(dir, AUDIT_LOG_FILE);
  const file = await openFile(path);
  const cut = anchor ? await retainedStart(file, anchor) : undefined;
  if (!anchor || cut === undefined) {
    await rm(join(dir, RETAINED_COPY_FILE), { force: true });
    return file;
  }
  logger.warn(
    { anchor_seq: anchor.seq },
    'finishing an interrupted archive: cutting archived entries off the log',
  );
  const copy = await RetainedCopy.begin({ dir, target: path, source: () => file, cut, openFile });
  await copy.copyUpTo(await file.size());
  const replaced = await copy.replace();
  await copy.syncDirectory();
  await file.close();
  return replaced;
}

/** Opens (creating if needed) the file audit log in options.dir. */
export function openFileAuditLog(options: FileAuditLogOptions): Promise<FileAuditLog> {
  return FileAuditLog.open(options);
}
