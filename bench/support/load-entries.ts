import { openRedisAuditLog } from '../../src/audit/redis/index.js';
import { decisionEvent } from './payloads.js';

/**
 * Appends `count` decision entries through the Redis backend itself (sealed, chained,
 * indexed), in big group commits: many appends in flight, 1,000 per script call.
 * Timestamps run from `startMs` in steps of `stepMs`.
 */
export async function loadEntries(
  redisUrl: string,
  count: number,
  options: { startMs: number; stepMs: number; actors?: number; capabilities?: number },
): Promise<void> {
  const log = await openRedisAuditLog({ redis: redisUrl, maxBatchEntries: 1000, appendTimeoutMs: 120_000 });
  try {
    const inFlight = 4000;
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < count) {
        const i = next++;
        const timestamp = new Date(options.startMs + i * options.stepMs).toISOString();
        await log.append(decisionEvent(i, timestamp, options.actors, options.capabilities));
      }
    };
    await Promise.all(Array.from({ length: Math.min(inFlight, count) }, () => lane()));
  } finally {
    await log.close();
  }
}
