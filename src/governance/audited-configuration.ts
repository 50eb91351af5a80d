import type { AuditEntry, AuditLog } from '../audit/audit-log.js';
import { everyEntry } from '../audit/query-pages.js';
import { systemEvent } from '../audit/system-event.js';
import { kindKey, objectKey, randomUuid, type ConfigObject, type EventType } from '../model/index.js';
import type { ConfigChangeData } from './config-changes.js';

/** The events that change an object's audited state: each carries the object after it (null once deleted). */
export const CONFIG_EVENT_TYPES: readonly EventType[] = [
  'capability.registered',
  'capability.deleted',
  'policy.created',
  'policy.updated',
  'policy.deleted',
  'actor.grant.created',
  'actor.grant.revoked',
  'delegation.created',
  'delegation.updated',
  'delegation.deleted',
];

/** JSON bytes of objects per config.snapshot entry (a part holds at least one object). */
const SNAPSHOT_PART_BYTES = 256 * 1024;

/**
 * data of a config.snapshot entry: one part of the audited configuration as the events up
 * to `as_of_seq` left it, written before entries up to `archived_to_seq` were archived.
 */
export interface ConfigSnapshotData {
  snapshot_id: string;
  as_of_seq: number;
  archived_to_seq: number;
  /** 1-based; a snapshot counts once all its parts are in the log. */
  part: number;
  parts: number;
  objects: ConfigObject[];
}

export interface AuditedConfiguration {
  /** The last audited state of every object, by objectKey. */
  objects: Map<string, ConfigObject>;
  /** The as_of_seq of the snapshot it started from; undefined when it replayed every retained event. */
  snapshotAsOf: number | undefined;
}

/**
 * The audited configuration as the retained log records it up to `upToSeq`: the newest
 * complete snapshot, then the configuration events after it, in order.
 */
export async function readAuditedConfiguration(
  audit: Pick<AuditLog, 'query'>,
  upToSeq = Number.POSITIVE_INFINITY,
): Promise<AuditedConfiguration> {
  const snapshot = await newestSnapshot(audit, upToSeq);
  const objects = new Map((snapshot?.objects ?? []).map((o) => [objectKey(o), o]));
  for (const entry of await configEvents(audit, snapshot?.asOfSeq ?? 0, upToSeq)) {
    const data = entry.data as unknown as ConfigChangeData;
    const key = kindKey(data.kind, data.name, data.namespace);
    if (data.object) objects.set(key, data.object);
    else if (data.object === null) objects.delete(key);
  }
  return { objects, snapshotAsOf: snapshot?.asOfSeq };
}

/** The configuration events after seq `after` up to `upToSeq`, in seq order. */
async function configEvents(
  audit: Pick<AuditLog, 'query'>,
  after: number,
  upToSeq: number,
): Promise<AuditEntry[]> {
  const events: AuditEntry[] = [];
  for (const eventType of CONFIG_EVENT_TYPES) {
    for await (const entry of everyEntry(audit, { event_type: eventType })) {
      if (entry.seq > after && entry.seq <= upToSeq) events.push(entry);
    }
  }
  return events.sort((a, b) => a.seq - b.seq);
}

interface Snapshot {
  asOfSeq: number;
  parts: number;
  seen: Set<number>;
  objects: ConfigObject[];
}

/** The complete snapshot with the highest as_of_seq among those up to `upToSeq`. */
async function newestSnapshot(
  audit: Pick<AuditLog, 'query'>,
  upToSeq: number,
): Promise<Snapshot | undefined> {
  const snapshots = new Map<string, Snapshot>();
  for await (const entry of everyEntry(audit, { event_type: 'config.snapshot' })) {
    if (entry.seq > upToSeq) break;
    const data = entry.data as unknown as ConfigSnapshotData;
    const snapshot = snapshots.get(data.snapshot_id) ?? {
      asOfSeq: data.as_of_seq,
      parts: data.parts,
      seen: new Set<number>(),
      objects: [],
    };
    snapshot.seen.add(data.part);
    snapshot.objects.push(...data.objects);
    snapshots.set(data.snapshot_id, snapshot);
  }
  // A run killed while writing one leaves it incomplete: it does not count.
  return [...snapshots.values()]
    .filter((s) => s.seen.size === s.parts)
    .sort((a, b) => a.asOfSeq - b.asOfSeq)
    .at(-1);
}

/**
 * Before the entries up to `cutSeq` are archived: appends the audited configuration (as
 * config.snapshot entries, past the cut) unless the newest snapshot already is past it. So
 * the configuration auditor, restoring from what is retained, knows every object still.
 */
export async function carryAuditedConfiguration(
  audit: AuditLog,
  options: { cutSeq: number; actor: string; clock: () => Date },
): Promise<void> {
  const head = await audit.head();
  const { objects, snapshotAsOf } = await readAuditedConfiguration(audit, head.seq);
  if (snapshotAsOf !== undefined && snapshotAsOf >= options.cutSeq) return;
  // No object and no snapshot: replaying the events after the cut alone gives the same.
  if (objects.size === 0 && snapshotAsOf === undefined) return;
  const parts = partsOf([...objects.values()]);
  const snapshotId = randomUuid();
  const timestamp = options.clock().toISOString();
  for (const [i, part] of parts.entries()) {
    const data: ConfigSnapshotData = {
      snapshot_id: snapshotId,
      as_of_seq: head.seq,
      archived_to_seq: options.cutSeq,
      part: i + 1,
      parts: parts.length,
      objects: part,
    };
    await audit.append(systemEvent('config.snapshot', timestamp, options.actor, { ...data }));
  }
}

/** Objects in parts of about SNAPSHOT_PART_BYTES; one empty part when there are none. */
function partsOf(objects: ConfigObject[]): ConfigObject[][] {
  const parts: ConfigObject[][] = [[]];
  let bytes = 0;
  for (const object of objects) {
    const size = JSON.stringify(object).length;
    if (bytes + size > SNAPSHOT_PART_BYTES && parts.at(-1)!.length > 0) {
      parts.push([]);
      bytes = 0;
    }
    parts.at(-1)!.push(object);
    bytes += size;
  }
  return parts;
}
