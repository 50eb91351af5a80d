import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HttpWitness } from '../../src/audit/witnessing/http-witness.js';
import { startWitnessServer } from '../../src/witness/witness-server.js';
import { WitnessState } from '../../src/witness/witness-state.js';
import type { Checkpoint } from '../../src/audit/audit-log.js';
import { cosignedNote } from '../../src/audit/checkpoint-shape.js';
import { naiveRoot, referenceLeafInput } from '../../src/audit/merkle/test-naive-tree.js';
import { verifyConsistency } from '../../src/audit/merkle/verify-consistency.js';
import { parseCheckpoint } from '../../src/audit/note/checkpoint-note.js';
import { generateSigningKey, SIGNATURE_TYPE, verifierOf } from '../../src/audit/note/note-keys.js';
import { openNote } from '../../src/audit/note/signed-note.js';
import { openRedisAuditLog, RedisAuditKeys } from '../../src/audit/redis/index.js';
import { decisionEvent } from './support/events.js';
import { MemoryCheckpointStore } from '../../src/audit/test-checkpoint-store.js';
import { useRedisSuite } from './support/redis-suite.js';

describe('Redis audit log: signed checkpoints', () => {
  const redis = useRedisSuite();

  const key = generateSigningKey('arbiter.test/redis-audit');
  const signing = { key, origin: 'arbiter.test/redis-audit' };

  async function open(
    prefix: string,
    store: MemoryCheckpointStore,
    isLeader: boolean,
    errors: string[] = [],
  ) {
    const log = await openRedisAuditLog({
      redis: redis.url(),
      keyPrefix: prefix,
      checkpoints: { store, everyEntries: 20, intervalMs: 0, isLeader: () => isLeader, signing },
      logger: { info: () => undefined, warn: () => undefined, error: (_d, message) => errors.push(message) },
    });
    return redis.track(log);
  }

  const bodies = (store: MemoryCheckpointStore) =>
    store.checkpoints
      .filter((c) => c.note)
      .map((c) => parseCheckpoint(openNote(c.note!, [verifierOf(key)]).text));

  it('the leader signs checkpoints of the shared tree that replicas write to; each extends the one before', async () => {
    const store = new MemoryCheckpointStore();
    const leader = await open('signed1:{audit}', store, true);
    const follower = await open('signed1:{audit}', store, false);
    for (let round = 0; round < 3; round++) {
      await Promise.all([
        ...Array.from({ length: 15 }, (_, i) => leader.append(decisionEvent(round * 100 + i))),
        ...Array.from({ length: 15 }, (_, i) => follower.append(decisionEvent(round * 100 + 50 + i))),
      ]);
      await Promise.all([leader.catchUpTree(), follower.catchUpTree()]);
    }
    await expect.poll(() => bodies(store).length).toBeGreaterThanOrEqual(2);
    const items = await redis.admin().xrange(new RedisAuditKeys('signed1:{audit}').stream, '-', '+');
    const leaves = items.map(([, fields]) => referenceLeafInput(JSON.parse(fields[1] as string) as object));
    const signed = bodies(store);
    for (const body of signed) {
      expect(body.origin).toBe('arbiter.test/redis-audit');
      expect(body.root.equals(naiveRoot(leaves.slice(0, body.size))), `size ${body.size}`).toBe(true);
    }
    for (let i = 1; i < signed.length; i++) {
      const [older, newer] = [signed[i - 1]!, signed[i]!];
      const proof = await follower.tree().consistencyProof(older.size, newer.size);
      expect(() => verifyConsistency(older.size, newer.size, proof, older.root, newer.root)).not.toThrow();
    }
  });

  it('has each signed checkpoint cosigned by the witness (a real witness server) before storing it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arbiter-redis-witness-'));
    const witnessKey = generateSigningKey('witness.test/redis', SIGNATURE_TYPE.cosignatureV1);
    const { server, port } = await startWitnessServer(
      {
        key: witnessKey,
        logKeys: new Map([['arbiter.test/redis-audit', [verifierOf(key)]]]),
        state: await WitnessState.open(join(dir, 'state.json')),
      },
      0,
      '127.0.0.1',
    );
    try {
      const store = new MemoryCheckpointStore();
      const witness = new HttpWitness({ url: `http://127.0.0.1:${port}`, key: verifierOf(witnessKey) });
      const log = redis.track(
        await openRedisAuditLog({
          redis: redis.url(),
          keyPrefix: 'witnessed:{audit}',
          checkpoints: {
            store,
            everyEntries: 20,
            intervalMs: 0,
            signing: { ...signing, witnesses: [witness] },
          },
        }),
      );
      for (let i = 0; i < 45; i++) await log.append(decisionEvent(i));
      await log.close();
      const signed = store.checkpoints.filter(
        (c): c is Checkpoint & { note: string } => c.note !== undefined,
      );
      expect(signed.map((c) => c.seq)).toEqual([20, 40, 45]);
      for (const checkpoint of signed) {
        const note = cosignedNote(checkpoint);
        expect(openNote(note, [verifierOf(witnessKey)]).verified.map((v) => v.name)).toEqual([
          'witness.test/redis',
        ]);
      }
      const state = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8'));
      expect(state.logs['arbiter.test/redis-audit'].size).toBe(45);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses to sign once the history in Redis was rewritten under the signed checkpoints', async () => {
    const store = new MemoryCheckpointStore();
    const first = await open('signed2:{audit}', store, true);
    for (let i = 0; i < 20; i++) await first.append(decisionEvent(i));
    await expect.poll(() => bodies(store).map((b) => b.size)).toEqual([20]);
    await first.close();
    // Someone with redis-cli replaces the log: every key of the prefix, rewritten from genesis.
    const keys = await redis.admin().keys('signed2:{audit}*');
    await redis.admin().del(...keys);
    const errors: string[] = [];
    const second = await open('signed2:{audit}', store, true, errors);
    for (let i = 0; i < 40; i++) await second.append(decisionEvent(500 + i));
    await expect.poll(() => store.checkpoints.map((c) => c.seq)).toContain(40);
    expect(store.checkpoints.filter((c) => c.note).map((c) => c.seq)).toEqual([20]);
    expect(errors).toContain(
      'audit checkpoint NOT signed: the tree does not extend the last signed checkpoint',
    );
  });
});
