import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Checkpoint } from '../../src/audit/audit-log.js';
import { ConfigMapCheckpointStore } from '../../src/audit/kube/index.js';
import { openRedisAuditLog } from '../../src/audit/redis/index.js';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import { decisionEvent } from './support/events.js';

// Needs the real kube-apiserver of test/env (bash test/env/setup builds it once).
const NAMESPACE = 'default';
const checkpoint = (seq: number, hash = `sha256:${String(seq).padStart(64, '0')}`): Checkpoint => ({
  seq,
  hash,
  entry_id: `entry-${seq}`,
  time: new Date(Date.UTC(2025, 0, 1, 0, 0, seq)).toISOString(),
});

describeWithControlPlane('ConfigMap checkpoint store on a real kube-apiserver', (controlPlane) => {
  let api: CoreV1Api;
  let server: RedisServer;
  const store = (name: string, retain = 100) =>
    new ConfigMapCheckpointStore({ api, namespace: NAMESPACE, name, retain });

  beforeAll(async () => {
    api = controlPlane().makeKubeConfig().makeApiClient(CoreV1Api);
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.dispose();
  });

  it('lists nothing before the ConfigMap exists, then keeps the newest checkpoints in seq order', async () => {
    const checkpoints = store('audit-retain', 3);
    expect(await checkpoints.list()).toEqual([]);
    for (const seq of [10, 20, 30, 40, 50]) await checkpoints.save(checkpoint(seq));
    expect(await checkpoints.list()).toEqual([checkpoint(30), checkpoint(40), checkpoint(50)]);
    const configMap = await api.readNamespacedConfigMap({ name: 'audit-retain', namespace: NAMESPACE });
    expect(JSON.parse(configMap.data?.['checkpoints.json'] ?? '{}')).toEqual({
      checkpoints: [checkpoint(30), checkpoint(40), checkpoint(50)],
    });
  });

  it('stores a signed checkpoint only while the newest signed one is the one its signer extended', async () => {
    const checkpoints = store('audit-signed-cas');
    await checkpoints.save({ ...checkpoint(10), note: 'note A\n' }, { previousNote: null });
    await checkpoints.save(checkpoint(15));
    await expect(
      checkpoints.save({ ...checkpoint(20), note: 'note B\n' }, { previousNote: null }),
    ).rejects.toMatchObject({
      code: 'checkpoint_conflict',
    });
    await checkpoints.save({ ...checkpoint(20), note: 'note B\n' }, { previousNote: 'note A\n' });
    expect((await checkpoints.list()).map((c) => [c.seq, c.note ?? null])).toEqual([
      [10, 'note A\n'],
      [15, null],
      [20, 'note B\n'],
    ]);
  });

  it('never replaces a checkpoint with one naming another hash at the same seq', async () => {
    const checkpoints = store('audit-no-replace');
    await checkpoints.save(checkpoint(5));
    await checkpoints.save(checkpoint(5, `sha256:${'f'.repeat(64)}`));
    expect(await checkpoints.list()).toEqual([checkpoint(5)]);
  });

  it('loses no checkpoint when two writers save at once (resourceVersion conflicts are retried)', async () => {
    const [a, b] = [store('audit-race'), store('audit-race')];
    const seqs = Array.from({ length: 12 }, (_, i) => i + 1);
    await Promise.all(seqs.map((seq) => (seq % 2 === 0 ? a : b).save(checkpoint(seq))));
    expect((await a.list()).map((c) => c.seq)).toEqual(seqs);
  });

  it('checkpoints a Redis audit chain and verifies entries from the nearest checkpoint', async () => {
    const checkpoints = store('audit-redis-chain');
    const log = await openRedisAuditLog({
      redis: server.url,
      keyPrefix: 'configmap:{audit}',
      checkpoints: { store: checkpoints, everyEntries: 3, intervalMs: 0 },
    });
    for (let n = 1; n <= 7; n += 1) await log.append(decisionEvent(n));
    await expect.poll(async () => (await checkpoints.list()).map((c) => c.seq)).toEqual([3, 6]);
    expect(await log.isVerified(5)).toBe(true);
    expect(await log.verify()).toMatchObject({ ok: true, entries_checked: 7, checkpoints_checked: 2 });
    await log.close();
    // The leader checkpoints the head on the way out.
    expect((await checkpoints.list()).map((c) => c.seq)).toEqual([3, 6, 7]);
  });
});
