import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Checkpoint } from '../../src/audit/audit-log.js';
import { planNodes } from '../../src/audit/merkle/proof-hashes.js';
import { consistencyPlan } from '../../src/audit/merkle/proof-plan.js';
import { type NodeId, nodeKey } from '../../src/audit/merkle/tree-shape.js';
import { parseCheckpoint } from '../../src/audit/note/checkpoint-note.js';
import { generateSigningKey, verifierOf } from '../../src/audit/note/note-keys.js';
import { openNote } from '../../src/audit/note/signed-note.js';
import { openRedisAuditLog } from '../../src/audit/redis/index.js';
import { RedisTreeStore } from '../../src/audit/redis/redis-tree.js';
import { MemoryCheckpointStore } from '../../src/audit/test-checkpoint-store.js';
import { decisionEvent } from './support/events.js';
import { useRedisSuite } from './support/redis-suite.js';

/**
 * The signer's two alarms apart: a Redis that stops answering while the signer reads the
 * consistency proof is an outage (signingUnavailable), never a refusal (signingRefused,
 * the rewritten-history alarm); a history really rewritten is still refused.
 */
describe('Redis audit log: an outage while signing is no refusal', () => {
  const redis = useRedisSuite();
  const key = generateSigningKey('arbiter.test/signing-outage');
  const counts = { refused: 0, unavailable: 0 };
  const warnings: string[] = [];
  const events = {
    signingRefused: () => (counts.refused += 1),
    signingUnavailable: () => (counts.unavailable += 1),
  };

  afterEach(async () => {
    vi.restoreAllMocks();
    if (!redis.server().running) await redis.server().restart(); // a test that failed mid-outage
  });

  const open = (prefix: string, store: MemoryCheckpointStore) =>
    openRedisAuditLog({
      redis: redis.url(),
      keyPrefix: prefix,
      checkpoints: {
        store,
        everyEntries: 10,
        intervalMs: 0,
        isLeader: () => true,
        signing: { key, origin: 'arbiter.test/signing-outage', events },
      },
      logger: {
        info: () => undefined,
        warn: (_d, message) => warnings.push(message),
        error: () => undefined,
      },
    }).then(redis.track);

  const signedSizes = (store: MemoryCheckpointStore) =>
    store.checkpoints
      .filter((c): c is Checkpoint & { note: string } => c.note !== undefined)
      .map((c) => parseCheckpoint(openNote(c.note, [verifierOf(key)]).text).size);

  /** Stops redis-server just before the signer reads the proof from `from` to `to`: after the root was read. */
  function stopRedisBeforeProof(from: number, to: number) {
    const proofNodes = new Set(planNodes(consistencyPlan(from, to)).map(nodeKey));
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with the store as `this`
    const readNodes = RedisTreeStore.prototype.readNodes;
    let stopped = false;
    vi.spyOn(RedisTreeStore.prototype, 'readNodes').mockImplementation(async function (
      this: RedisTreeStore,
      nodes: readonly NodeId[],
    ) {
      const isProof = nodes.length === proofNodes.size && nodes.every((n) => proofNodes.has(nodeKey(n)));
      if (isProof && !stopped) {
        stopped = true;
        await redis.server().stop();
      }
      return readNodes.call(this, nodes);
    });
    return { stopped: () => stopped };
  }

  it('counts Redis stopped mid-way through reading the consistency proof as unavailable, and signs once it is back', async () => {
    const store = new MemoryCheckpointStore();
    const log = await open('outage:{audit}', store);
    for (let i = 0; i < 10; i++) await log.append(decisionEvent(i));
    await expect.poll(() => signedSizes(store)).toEqual([10]);

    const outage = stopRedisBeforeProof(10, 20);
    for (let i = 10; i < 20; i++) await log.append(decisionEvent(i));
    // The checkpoint at 20 went to the signer, which read the root, then lost Redis; the
    // checkpointer gives the save up (a refusal would have saved it unsigned).
    await expect.poll(() => counts.refused + counts.unavailable, { timeout: 10_000 }).toBe(1);
    expect(outage.stopped()).toBe(true);
    expect(counts).toEqual({ refused: 0, unavailable: 1 });
    await expect.poll(() => warnings).toContain('audit checkpoint could not be saved');
    expect(signedSizes(store)).toEqual([10]);

    vi.restoreAllMocks();
    await redis.server().restart();
    await expect
      .poll(
        async () =>
          log.append(decisionEvent(20)).then(
            () => true,
            () => false,
          ),
        { timeout: 15_000 },
      )
      .toBe(true);
    for (let i = 21; i < 31; i++) await log.append(decisionEvent(i));
    await expect.poll(() => signedSizes(store).at(-1), { timeout: 10_000 }).toBe(30);
    expect(counts).toEqual({ refused: 0, unavailable: 1 });
  });

  it('still counts a history rewritten in Redis as a refusal, not as unavailable', async () => {
    const store = new MemoryCheckpointStore();
    const first = await open('rewritten:{audit}', store);
    const before = { ...counts };
    for (let i = 0; i < 10; i++) await first.append(decisionEvent(100 + i));
    await expect.poll(() => signedSizes(store).length).toBe(1);
    await first.close();
    // Someone with redis-cli replaces the log: every key of the prefix, rewritten from genesis.
    await redis.admin().del(...(await redis.admin().keys('rewritten:{audit}*')));
    const second = await open('rewritten:{audit}', store);
    for (let i = 0; i < 20; i++) await second.append(decisionEvent(500 + i));
    await expect.poll(() => counts.refused - before.refused, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    expect(counts.unavailable).toBe(before.unavailable);
  });
});
