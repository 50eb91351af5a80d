import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Checkpoint } from '../../src/audit/audit-log.js';
import { CHECKPOINTS_KEY, ConfigMapCheckpointStore } from '../../src/audit/kube/index.js';
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

  it('refuses a retention that is not a positive whole number of checkpoints', () => {
    for (const retain of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => store('audit-bad-retain', retain)).toThrow(
        expect.objectContaining({ code: 'INVALID_REQUEST', message: 'retain must be a positive integer' }),
      );
    }
    expect(() => store('audit-one', 1)).not.toThrow();
  });

  it("creates the ConfigMap with its labels, in the file store's format, and keeps keys others wrote", async () => {
    const labels = { 'app.kubernetes.io/name': 'arbiter' };
    const checkpoints = new ConfigMapCheckpointStore({
      api,
      namespace: NAMESPACE,
      name: 'audit-format',
      retain: 5,
      labels,
    });
    await checkpoints.save(checkpoint(2));
    const created = await api.readNamespacedConfigMap({ name: 'audit-format', namespace: NAMESPACE });
    expect(created.metadata?.labels).toEqual(labels);
    expect(created.data).toEqual({
      [CHECKPOINTS_KEY]: `${JSON.stringify({ checkpoints: [checkpoint(2)] }, null, 2)}\n`,
    });
    await api.replaceNamespacedConfigMap({
      name: 'audit-format',
      namespace: NAMESPACE,
      body: { ...created, data: { ...created.data, 'README.txt': 'written by an admin' } },
    });
    await checkpoints.save(checkpoint(1));
    const replaced = await api.readNamespacedConfigMap({ name: 'audit-format', namespace: NAMESPACE });
    expect(replaced.data).toEqual({
      'README.txt': 'written by an admin',
      [CHECKPOINTS_KEY]: `${JSON.stringify({ checkpoints: [checkpoint(1), checkpoint(2)] }, null, 2)}\n`,
    });
    expect(replaced.metadata?.labels).toEqual(labels);
  });

  it('lists checkpoints in seq order whatever order the ConfigMap holds them in, and none without its key', async () => {
    await api.createNamespacedConfigMap({
      namespace: NAMESPACE,
      body: {
        metadata: { name: 'audit-unsorted' },
        data: {
          [CHECKPOINTS_KEY]: JSON.stringify({ checkpoints: [checkpoint(9), checkpoint(3), checkpoint(6)] }),
        },
      },
    });
    expect((await store('audit-unsorted').list()).map((c) => c.seq)).toEqual([3, 6, 9]);
    await api.createNamespacedConfigMap({
      namespace: NAMESPACE,
      body: { metadata: { name: 'audit-other-keys' }, data: { 'other.json': '{}' } },
    });
    expect(await store('audit-other-keys').list()).toEqual([]);
  });

  it('refuses a ConfigMap that does not hold a checkpoint list, to read or to save into', async () => {
    const holding = [
      'not json',
      '{}',
      '{"checkpoints": {}}',
      JSON.stringify({ checkpoints: [{ seq: 'one' }] }),
      // One good checkpoint does not make the list good.
      JSON.stringify({ checkpoints: [checkpoint(1), { ...checkpoint(2), seq: 2.5 }] }),
    ];
    for (const [i, text] of holding.entries()) {
      const name = `audit-garbled-${i}`;
      await api.createNamespacedConfigMap({
        namespace: NAMESPACE,
        body: { metadata: { name }, data: { [CHECKPOINTS_KEY]: text } },
      });
      const refusal = {
        code: 'INTERNAL',
        message: `ConfigMap ${NAMESPACE}/${name} does not hold a checkpoint list`,
      };
      await expect(store(name).list()).rejects.toMatchObject(refusal);
      await expect(store(name).save(checkpoint(1))).rejects.toMatchObject(refusal);
      const kept = await api.readNamespacedConfigMap({ name, namespace: NAMESPACE });
      expect(kept.data?.[CHECKPOINTS_KEY]).toBe(text);
    }
  });

  it('gives up with a conflict when another writer changes the ConfigMap between every read and write', async () => {
    await store('audit-busy').save(checkpoint(1));
    let writes = 0;
    // Each read is followed by a real change from someone else, so each replace meets a 409.
    const busy: ConstructorParameters<typeof ConfigMapCheckpointStore>[0]['api'] = {
      readNamespacedConfigMap: async (request) => {
        const read = await api.readNamespacedConfigMap(request);
        const other = await api.readNamespacedConfigMap(request);
        await api.replaceNamespacedConfigMap({
          ...request,
          body: { ...other, data: { ...other.data, other: String(Math.random()) } },
        });
        return read;
      },
      createNamespacedConfigMap: (request) => api.createNamespacedConfigMap(request),
      replaceNamespacedConfigMap: (request) => {
        writes += 1;
        return api.replaceNamespacedConfigMap(request);
      },
    };
    const limited = new ConfigMapCheckpointStore({
      api: busy,
      namespace: NAMESPACE,
      name: 'audit-busy',
      retain: 5,
      maxAttempts: 3,
    });
    await expect(limited.save(checkpoint(2))).rejects.toMatchObject({
      code: 'CONFLICT',
      message: `checkpoint ConfigMap ${NAMESPACE}/audit-busy kept changing; gave up after 3 attempts`,
    });
    expect(writes).toBe(3);
    writes = 0;
    const byDefault = new ConfigMapCheckpointStore({
      api: busy,
      namespace: NAMESPACE,
      name: 'audit-busy',
      retain: 5,
    });
    await expect(byDefault.save(checkpoint(2))).rejects.toMatchObject({
      message: /gave up after 8 attempts/,
    });
    expect(writes).toBe(8);
    expect((await store('audit-busy').list()).map((c) => c.seq)).toEqual([1]);
  });

  it('passes on a refusal of the API server other than a missing ConfigMap or a conflict', async () => {
    const asAlice = controlPlane().makeKubeConfig('alice').makeApiClient(CoreV1Api);
    const forbidden = new ConfigMapCheckpointStore({
      api: asAlice,
      namespace: NAMESPACE,
      name: 'audit-retain',
      retain: 3,
    });
    await expect(forbidden.list()).rejects.toMatchObject({ code: 403 });
    await expect(forbidden.save(checkpoint(60))).rejects.toMatchObject({ code: 403 });
    // A user who may read but not write is refused at the write, not retried.
    const readOnly = {
      readNamespacedConfigMap: (request: { name: string; namespace: string }) =>
        api.readNamespacedConfigMap(request),
      createNamespacedConfigMap: asAlice.createNamespacedConfigMap.bind(asAlice),
      replaceNamespacedConfigMap: asAlice.replaceNamespacedConfigMap.bind(asAlice),
    };
    const writer = new ConfigMapCheckpointStore({
      api: readOnly,
      namespace: NAMESPACE,
      name: 'audit-retain',
      retain: 3,
    });
    await expect(writer.save(checkpoint(60))).rejects.toMatchObject({ code: 403 });
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
