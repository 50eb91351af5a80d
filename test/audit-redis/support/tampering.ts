import type { Redis } from 'ioredis';
import type { AuditEntry } from '../../../src/audit/audit-log.js';
import { hashEntry } from '../../../src/audit/chain.js';
import type { RedisAuditKeys } from '../../../src/audit/redis/index.js';

/**
 * What an intruder with redis-cli can do to a stream: streams are append-only, so it is
 * rebuilt, each item under the id and with the fields `edit` gives it, or left out.
 */
export async function rewriteStream(
  admin: Redis,
  keys: RedisAuditKeys,
  edit: (id: string, fields: string[]) => [id: string, fields: string[]] | undefined,
): Promise<void> {
  const items = await admin.xrange(keys.stream, '-', '+');
  const rewrite = admin.multi().del(keys.stream);
  for (const [id, fields] of items) {
    const kept = edit(id, fields);
    if (kept) rewrite.xadd(keys.stream, kept[0], ...kept[1]);
  }
  await rewrite.exec();
}

/** The stream rewritten with the item at `seq` holding the fields `change` gives it, or left out. */
export async function rewriteItem(
  admin: Redis,
  keys: RedisAuditKeys,
  seq: number,
  change: (entry: AuditEntry) => string[] | undefined,
): Promise<void> {
  await rewriteStream(admin, keys, (id, fields) => {
    const entry = JSON.parse(fields[1]!) as AuditEntry;
    if (entry.seq !== seq) return [id, fields];
    const kept = change(entry);
    return kept && [id, kept];
  });
}

/** The entry edited and sealed anew: its own hash holds, the next entry's link to it does not. */
export function resealed(entry: AuditEntry, edit: Partial<AuditEntry>): AuditEntry {
  const edited = { ...entry, ...edit };
  return { ...edited, hash: hashEntry(edited) };
}
