// A separate writer process: appends to a shared chain and reports every outcome on stdout,
// one JSON line each: {"n", "seq", "id"} when acknowledged, {"n", "error"} when rejected.
import { openRedisAuditLog } from '../../../src/audit/redis/index.js';
import { decisionEvent } from './events.js';

const [url, prefix, writer, countText, concurrencyText] = process.argv.slice(2);
const count = Number(countText);
const concurrency = Number(concurrencyText ?? '8');

const log = await openRedisAuditLog({ redis: url!, keyPrefix: prefix!, appendTimeoutMs: 15_000 });
let next = 0;
async function worker(): Promise<void> {
  while (next < count) {
    const n = next++;
    try {
      const entry = await log.append(decisionEvent(n, { actor_id: writer!, data: { writer, n } }));
      process.stdout.write(`${JSON.stringify({ n, seq: entry.seq, id: entry.id })}\n`);
    } catch (err) {
      process.stdout.write(`${JSON.stringify({ n, error: String(err) })}\n`);
    }
  }
}
await Promise.all(Array.from({ length: concurrency }, () => worker()));
await log.close();
