import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ArbiterError, AuditUnavailableError } from '../../model/index.js';
import type {
  AuditEntry,
  AuditEventInput,
  AuditLog,
  AuditPage,
  AuditQuery,
  ChainHead,
  Checkpoint,
  CheckpointStore,
} from '../audit-log.js';
import { type AuditTree, StoredAuditTree } from '../audit-tree.js';
import { CheckpointSigner, type CheckpointSigning } from '../checkpoint-signer.js';
import { assertCanonicalisable, GENESIS_HASH, leafInput, sealEntry, storedText } from '../chain.js';
import { leafHash } from '../merkle/tree-hash.js';
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
import { RangeVerifier } from './range-verifier.js';
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
  file: LogFile;
  tree: TreeFile;
  loaded: LoadedLog;
  store: CheckpointStore;
  initialCheckpoints: Checkpoint[];
  ranges: RangeVerifier;
  logger: AuditLogger;
  now: () => Date;
  newId: () => string;
  maxBatchEntries: number;
  checkpointEvery: CheckpointEvery;
  signing: CheckpointSigning | undefined;
  withoutTree: boolean;
}

function validateEvent(event: AuditEventInput): void {
  if (Number.isNaN(Date.parse(event.timestamp))) {
    throw new ArbiterError(
      'INTERNAL',
      `audit event timestamp ${JSON.stringify(event.timestamp)} is not ISO 8601`,
    );
  }
  assertCanonicalisable(event); // throws for what JSON cannot hold, before it can fail a whole batch
}

/**
 * The embedded audit log: an append-only JSON Lines file, one entry per line, hash-chained.
 * Appends are group-committed (one write+fsync per batch) and resolve only once durable.
 * Queries use in-memory indexes; entries are read back from the file.
 */
export class FileAuditLog implements AuditLog {
  private readonly listeners = new Set<(entry: AuditEntry) => void>();
  private readonly commits: GroupCommit<AuditEventInput, AuditEntry>;
  private closed = false;
  /** A failed write whose truncation also failed leaves bytes to cut before the next write. */
  private dirtyTail = false;

  private readonly file: LogFile;
  private readonly treeFile: TreeFile;
  private readonly index: EntryIndex;
  private length: number;
  private last: HeadSnapshot | undefined;
  private readonly checkpointStore: CheckpointStore;
  private readonly checkpointer: Checkpointer;
  private readonly ranges: RangeVerifier;
  private readonly logger: AuditLogger;
  private readonly newId: () => string;
  private readonly withoutTree: boolean;

  private constructor(parts: LogParts) {
    this.file = parts.file;
    this.treeFile = parts.tree;
    this.index = parts.loaded.index;
    this.length = parts.loaded.length;
    this.last = parts.loaded.head;
    this.checkpointStore = parts.store;
    this.logger = parts.logger;
    this.newId = parts.newId;
    this.withoutTree = parts.withoutTree;
    this.ranges = parts.ranges;
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
    await mkdir(settings.dir, { recursive: true });
    const store =
      settings.checkpointStore ??
      new FileCheckpointStore({ dir: settings.dir, retain: settings.retainCheckpoints });
    const initialCheckpoints = await store.list();
    const file = await (settings.openFile ?? openLogFile)(join(settings.dir, AUDIT_LOG_FILE));
    const loaded = await loadLog(file, initialCheckpoints, logger);
    if (!loaded.report.ok) {
      logger.error(
        { break: loaded.report.break },
        'audit chain is broken; new entries continue from the last one',
      );
    }
    const ranges = new RangeVerifier({
      file,
      index: loaded.index,
      checkpoints: () => store.list(),
      now,
      cacheMs: settings.verifyCacheSeconds * 1000,
      logger,
    });
    ranges.setKnownBreak(loaded.report.break?.seq);
    const tree = await openTree({ ...settings, logger }, file, loaded, initialCheckpoints);
    const log = new FileAuditLog({
      file,
      tree,
      loaded,
      store,
      initialCheckpoints,
      ranges,
      logger,
      now,
      newId: settings.idGenerator ?? (() => `aud_${randomUUID()}`),
      maxBatchEntries: settings.maxBatchEntries,
      checkpointEvery: settings.checkpointEvery,
      signing: settings.signing,
      withoutTree: settings.withoutTree ?? false,
    });
    log.checkpointer.start();
    return log;
  }

  append(event: AuditEventInput): Promise<AuditEntry> {
    if (this.closed) return Promise.reject(new AuditUnavailableError('the audit log is closed'));
    try {
      validateEvent(event);
    } catch (err) {
      return Promise.reject(err instanceof ArbiterError ? err : new ArbiterError('INTERNAL', String(err)));
    }
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
    const report = await verifyLogFile(this.file, this.length, head, checkpoints);
    this.ranges.setKnownBreak(report.break?.seq);
    return report;
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

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.commits.drain();
    await this.checkpointer.stop();
    await this.file.close();
    await this.treeFile.close();
  }

  /** One write and one fsync for the whole batch; on failure nothing of it remains. */
  private async writeBatch(events: AuditEventInput[]): Promise<AuditEntry[]> {
    let previous: { seq: number; hash: string } | null = this.last ?? null;
    const entries = events.map((event) => {
      const entry = sealEntry({ id: this.newId(), ...event }, previous);
      previous = entry;
      return entry;
    });
    const lines = entries.map((entry) => `${storedText(entry)}\n`);
    const data = Buffer.from(lines.join(''), 'utf8');
    const treeBefore = this.treeFile.size;
    try {
      if (this.dirtyTail) await this.cutTail();
      // The two files are written side by side; a failure undoes both. Only the log is
      // synced here: the tree is synced before each checkpoint, and what it held past the
      // last one is hashed again from the log at the next start (tree-catch-up.ts).
      await Promise.all([this.file.write(data, this.length), this.appendToTree(entries)]);
      await this.file.sync();
    } catch (err) {
      await this.rollback(treeBefore);
      throw new AuditUnavailableError('the audit log could not store the entries', { cause: err });
    }
    this.commit(entries, lines);
    return entries;
  }

  /** Leaf index = seq - 1: a tree that lost step with the log (a gap at open) is left as it is. */
  private async appendToTree(entries: AuditEntry[]): Promise<void> {
    if (this.withoutTree || this.treeFile.size !== entries[0]!.seq - 1) return;
    await this.treeFile.append(entries.map((entry) => leafHash(leafInput(entry))));
  }

  private commit(entries: AuditEntry[], lines: string[]): void {
    entries.forEach((entry, i) => {
      const bytes = Buffer.byteLength(lines[i]!, 'utf8');
      this.index.add(entry, this.length, bytes - 1);
      this.length += bytes;
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
        'audit tree could not cut back a failed write; it is rebuilt from the log at the next start',
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

/** Opens audit.tree and brings it level with the loaded log. */
async function openTree(
  settings: { dir: string; openFile?: OpenLogFile; logger: AuditLogger },
  file: LogFile,
  loaded: LoadedLog,
  checkpoints: readonly Checkpoint[],
): Promise<TreeFile> {
  const tree = await TreeFile.open(await (settings.openFile ?? openLogFile)(join(settings.dir, TREE_FILE)));
  await catchUpTree({
    tree,
    file,
    index: loaded.index,
    logLeaves: loaded.head?.seq ?? 0,
    checkpointed: checkpoints.at(-1)?.seq ?? 0,
    logger: settings.logger,
  });
  return tree;
}

/** Opens (creating if needed) the file audit log in options.dir. */
export function openFileAuditLog(options: FileAuditLogOptions): Promise<FileAuditLog> {
  return FileAuditLog.open(options);
}
