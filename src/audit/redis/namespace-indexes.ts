import type { Redis } from 'ioredis';
import { parseNamespacedActorId } from '../../model/index.js';
import type { RedisAuditKeys } from './redis-keys.js';

/**
 * Builds the namespace indexes of a log written before they existed, once: each
 * namespaced actor's index is merged into its namespace's. Appends index the namespace
 * themselves, and a merge keeps what the index already holds, so replicas that open the
 * log at once, or append meanwhile, lose nothing.
 */
export async function buildNamespaceIndexes(redis: Redis, keys: RedisAuditKeys): Promise<void> {
  if ((await redis.exists(keys.namespaceIndexesBuilt)) === 1) return;
  const actorPrefix = keys.index('actor_id', '');
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${globEscape(actorPrefix)}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of found) {
      const namespace = parseNamespacedActorId(key.slice(actorPrefix.length))?.namespace;
      if (namespace === undefined) continue;
      const target = keys.index('namespace', namespace);
      await redis.zunionstore(target, 2, target, key);
    }
  } while (cursor !== '0');
  await redis.set(keys.namespaceIndexesBuilt, '1');
}

function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
