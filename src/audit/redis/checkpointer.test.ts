import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryCheckpointStore } from '../test-checkpoint-store.js';
import type { Checkpoint } from '../audit-log.js';
import { recordingLogger } from '../file/test-fixtures.js';
import { Checkpointer, type CheckpointSettings } from './checkpointer.js';

const head = (seq: number): Checkpoint => ({
  seq,
  hash: `sha256:${seq}`,
  entry_id: `aud_${seq}`,
  time: '2025-01-01T00:00:00.000Z',
});

function checkpointer(settings: Partial<CheckpointSettings> & { store: MemoryCheckpointStore }) {
  const { logged, logger } = recordingLogger();
  const made = new Checkpointer(
    { everyEntries: 10, intervalMs: 0, isLeader: () => true, listCacheMs: 60_000, ...settings },
    logger,
  );
  return { checkpointer: made, logged };
}

const seqs = (store: MemoryCheckpointStore) => store.checkpoints.map((c) => c.seq);
const noHead = () => Promise.resolve(undefined);

afterEach(() => vi.useRealTimers());

describe('the Redis log checkpointer', () => {
  it('saves a head every N entries past the last checkpoint, counting from the stored ones', async () => {
    const store = new MemoryCheckpointStore();
    await store.save(head(5));
    const { checkpointer: c } = checkpointer({ store });
    await c.start(noHead);
    for (const seq of [6, 14, 5, 15, 16, 24]) c.offer(head(seq));
    await c.stop();
    expect(seqs(store)).toEqual([5, 15]);
  });

  it('saves any moved head when forced, and nothing it saved already', async () => {
    const store = new MemoryCheckpointStore();
    const { checkpointer: c } = checkpointer({ store });
    await c.start(noHead);
    c.offer(head(3), true);
    c.offer(head(3), true);
    c.offer(head(2), true);
    c.offer(head(4), true);
    await c.stop();
    expect(seqs(store)).toEqual([3, 4]);
  });

  it('saves nothing on a replica that is not the leader', async () => {
    const store = new MemoryCheckpointStore();
    const { checkpointer: c } = checkpointer({ store, isLeader: () => false });
    await c.start(noHead);
    c.offer(head(50));
    c.offer(head(60), true);
    await c.stop();
    expect(seqs(store)).toEqual([]);
  });

  it('starts without the stored checkpoints when the store is down, saying so, and saves once it is back', async () => {
    const store = new MemoryCheckpointStore();
    await store.save(head(5));
    store.outage = new Error('configmaps is forbidden');
    const { checkpointer: c, logged } = checkpointer({ store });
    await c.start(noHead);
    expect(logged).toEqual([
      {
        level: 'warn',
        details: { err: expect.objectContaining({ cause: store.outage }) as unknown },
        message: 'audit checkpoints could not be read; will retry on use',
      },
    ]);
    store.outage = undefined;
    // Counting from 0, not from the unread checkpoint at 5.
    c.offer(head(10));
    await c.stop();
    expect(seqs(store)).toEqual([5, 10]);
  });

  it('logs a checkpoint it could not save with its seq and cause, and saves the next one', async () => {
    const store = new MemoryCheckpointStore();
    const { checkpointer: c, logged } = checkpointer({ store });
    await c.start(noHead);
    const outage = new Error('connection refused');
    store.outage = outage;
    c.offer(head(10));
    await c.stop();
    expect(logged).toEqual([
      { level: 'warn', details: { err: outage, seq: 10 }, message: 'audit checkpoint could not be saved' },
    ]);
    store.outage = undefined;
    c.offer(head(20));
    await c.stop();
    expect(seqs(store)).toEqual([20]);
  });

  it('lists the stored checkpoints oldest first, reading the store again only when the list is stale or a save changed it', async () => {
    const store = new MemoryCheckpointStore();
    for (const seq of [30, 10, 20]) await store.save(head(seq));
    const { checkpointer: c } = checkpointer({ store });
    await c.start(noHead);
    const readsAfterStart = store.lists;
    expect((await c.list()).map((cp) => cp.seq)).toEqual([10, 20, 30]);
    store.checkpoints.push(head(35)); // written by another replica: unseen while the list is fresh
    expect((await c.list()).map((cp) => cp.seq)).toEqual([10, 20, 30]);
    expect(store.lists).toBe(readsAfterStart);
    expect((await c.list(true)).map((cp) => cp.seq)).toEqual([10, 20, 30, 35]);
    c.offer(head(45));
    await c.stop();
    expect((await c.list()).map((cp) => cp.seq)).toEqual([10, 20, 30, 35, 45]);
  });

  it('reads the store on every list when the cache time is 0', async () => {
    vi.useFakeTimers(); // the clock stands still: every list is within the same millisecond
    const store = new MemoryCheckpointStore();
    const { checkpointer: c } = checkpointer({ store, listCacheMs: 0 });
    await c.start(noHead);
    await c.list();
    store.checkpoints.push(head(7));
    expect((await c.list()).map((cp) => cp.seq)).toEqual([7]);
  });

  it('answers with the last list while the store is down, and fails only with no list at all', async () => {
    vi.useFakeTimers();
    const store = new MemoryCheckpointStore();
    await store.save(head(10));
    const outage = new Error('connection refused');
    store.outage = outage;
    const { checkpointer: never } = checkpointer({ store, listCacheMs: 0 });
    await expect(never.list()).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: 'audit checkpoints could not be read from their store',
      cause: outage,
    });

    store.outage = undefined;
    const { checkpointer: c, logged } = checkpointer({ store, listCacheMs: 0 });
    await c.start(noHead);
    store.outage = outage;
    expect((await c.list()).map((cp) => cp.seq)).toEqual([10]);
    expect(logged).toEqual([
      {
        level: 'warn',
        details: { err: outage },
        message: 'audit checkpoints could not be read; using the last list',
      },
    ]);
  });

  it('checkpoints a moved head on its timer, logs a head it could not read, and stops with stop()', async () => {
    vi.useFakeTimers();
    const store = new MemoryCheckpointStore();
    const { checkpointer: c, logged } = checkpointer({ store, intervalMs: 1000 });
    let current: Checkpoint | undefined;
    const unreadable = new Error('redis down');
    let reads = 0;
    await c.start(() => {
      reads += 1;
      return current === undefined ? Promise.reject(unreadable) : Promise.resolve(current);
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(reads).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(reads).toBe(1);
    expect(logged).toEqual([
      {
        level: 'warn',
        details: { err: unreadable },
        message: 'audit checkpoint timer could not read the chain head',
      },
    ]);
    current = head(3); // fewer than everyEntries: only the timer saves it
    await vi.advanceTimersByTimeAsync(1000);
    await vi.advanceTimersByTimeAsync(1000); // the head did not move: no second save
    expect(seqs(store)).toEqual([3]);
    await c.stop();
    current = head(4);
    await vi.advanceTimersByTimeAsync(5000);
    expect(reads).toBe(3);
    expect(seqs(store)).toEqual([3]);
  });

  it('runs no timer when the interval is 0', async () => {
    vi.useFakeTimers();
    const store = new MemoryCheckpointStore();
    const { checkpointer: c } = checkpointer({ store, intervalMs: 0 });
    let reads = 0;
    await c.start(() => {
      reads += 1;
      return Promise.resolve(head(1));
    });
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(reads).toBe(0);
    await c.stop();
  });
});
