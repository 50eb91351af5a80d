import type { EventType, Outcome } from '../model/index.js';
import type { AuditTree } from './audit-tree.js';

/**
 * What a caller hands to the audit log. Fields not meaningful for an event are null
 * (a configuration event has no risk_score), so every entry has the same shape.
 */
export interface AuditEventInput {
  event_type: EventType;
  /** ISO 8601, set by the caller from its clock so the decision and its entry agree. */
  timestamp: string;
  /** For decisions the proposing actor; for configuration events the authenticated caller. */
  actor_id: string | null;
  capability: string | null;
  outcome: Outcome | null;
  risk_score: number | null;
  decision_id: string | null;
  policies_evaluated: string[];
  policy_matched: string | null;
  /** Event details: the full request and evaluation of a decision, the object of a config change. */
  data: Record<string, unknown>;
  /** The namespace the event belongs to (a namespaced object's); absent for cluster-wide events. */
  namespace?: string;
}

/** A stored entry (service-interface.md 2.6 plus seq and data). The hash covers every field but itself. */
export interface AuditEntry extends AuditEventInput {
  id: string;
  /** Gap-free position in the chain, starting at 1. */
  seq: number;
  previous_hash: string;
  hash: string;
}

export interface AuditQuery {
  actor_id?: string;
  capability?: string;
  outcome?: Outcome;
  decision_id?: string;
  event_type?: EventType;
  /** The entries of this namespace's actors (`team-a/bot`): entry-namespace.ts. */
  namespace?: string;
  /** Inclusive ISO 8601 bounds on timestamp. */
  since?: string;
  until?: string;
  /** asc: oldest first (export order); desc: newest first. */
  order: 'asc' | 'desc';
  limit: number;
  /** Exclusive seq bound in the direction of `order`, from the previous page. */
  after?: number;
}

export interface AuditPage {
  entries: AuditEntry[];
  /** Exact number of entries matching the filters, ignoring paging. */
  total: number;
  /** seq to pass as `after` for the next page; null when there is none. */
  next: number | null;
}

export interface ChainHead {
  seq: number;
  hash: string;
}

export interface Checkpoint extends ChainHead {
  entry_id: string;
  time: string;
  /** The signed C2SP checkpoint of the tree at size seq, when the log has a signing key. */
  note?: string;
  /** Witnesses' cosignature lines of the note (C2SP tlog-cosignature), gathered before it was stored. */
  cosignatures?: string[];
}

export interface ChainBreak {
  seq: number;
  entry_id?: string;
  reason: string;
}

export interface VerifyReport {
  ok: boolean;
  entries_checked: number;
  head: ChainHead;
  /** The first place where the chain does not hold, when ok is false. */
  break?: ChainBreak;
  checkpoints_checked: number;
  /**
   * Losses of stored entries found and recorded (audit.rollback_detected entries): the
   * chain verifies after one, but entries acknowledged before it are gone.
   */
  rollbacks?: RollbackReport[];
  /** Which entries the log holds; verification started at its anchor when entries were archived. */
  retained?: RetainedRange;
}

/**
 * The last archived checkpoint: the retained log continues from it, and it is the trust
 * anchor of everything retained (the first retained entry links to its hash).
 */
export interface RetentionAnchor extends ChainHead {
  entry_id: string;
  /** When the checkpoint was taken: what `archive --before` compared. */
  checkpoint_time: string;
  archived_at: string;
  /** File name of the archive ending at this entry. */
  archive: string;
}

/** The entries a log holds: seq from_seq to its head; before them, archives. */
export interface RetainedRange {
  from_seq: number;
  /** null while nothing was archived (from_seq is 1). */
  anchor: RetentionAnchor | null;
}

/** Stored entries found gone (a Redis failover without WAIT), as recorded in the log. */
export interface RollbackReport {
  /** The range that was lost: seqs this replica had stored, now held by other entries or none. */
  lost_from_seq: number;
  lost_to_seq: number;
  /** The head Redis held when the loss was found. */
  found_head: ChainHead;
  detected_at: string;
  /** The entry recording it (once the chain continued), when there is one. */
  audit_ref?: string;
}

/**
 * The audit log: the file backend (embedded) and the Redis backend (cluster) both
 * implement it. append resolves only once the entry is durably stored; it rejects
 * (AuditUnavailableError) otherwise, and the caller fails closed.
 */
export interface AuditLog {
  append(event: AuditEventInput): Promise<AuditEntry>;
  query(query: AuditQuery): Promise<AuditPage>;
  get(id: string): Promise<AuditEntry | undefined>;
  /** Every entry of one decision (the decision, reviews, execution), oldest first. */
  byDecision(decisionId: string): Promise<AuditEntry[]>;
  /** True when the chain holds from the nearest checkpoint at or before seq up to seq. */
  isVerified(seq: number): Promise<boolean>;
  verify(): Promise<VerifyReport>;
  head(): Promise<ChainHead>;
  /** The RFC 6962 Merkle tree over the entries (leaf index = seq - 1), stored beside them. */
  tree(): AuditTree;
  /** Retained checkpoints, oldest first; signed ones carry their C2SP note. */
  checkpoints(): Promise<Checkpoint[]>;
  /** Where the retained entries start (after archiving), and the anchor they continue from. */
  retained(): Promise<RetainedRange>;
  /**
   * Makes `anchor` the start of the retained log, then removes the entries up to it. The
   * anchor must name a checkpointed entry the log still holds (its hash checked), or be
   * the current anchor: called again after a crash, trim finishes the removal. An anchor
   * behind the current one is refused (ArbiterError CONFLICT).
   */
  trim(anchor: RetentionAnchor): Promise<void>;
  /** Live feed of appended entries (for SSE); returns the unsubscribe function. */
  subscribe(listener: (entry: AuditEntry) => void): () => void;
  /** Flushes pending appends and releases resources. */
  close(): Promise<void>;
}

/** Where chain heads are checkpointed: a file in embedded mode, a ConfigMap in a cluster. */
export interface CheckpointStore {
  /** Retained checkpoints, oldest first. */
  list(): Promise<Checkpoint[]>;
  /**
   * Adds a checkpoint, dropping the oldest beyond the retention count. With
   * `previousNote`, a signed checkpoint is stored only if the newest signed one is still
   * that note (null: none yet), else CheckpointConflictError: one origin, one history.
   */
  save(checkpoint: Checkpoint, options?: { previousNote: string | null }): Promise<void>;
}
