import { readFile, rename, writeFile } from 'node:fs/promises';
import type { Redis } from 'ioredis';

/**
 * Where each receiver's progress is kept: the seq of the last audit entry whose
 * notification it was given (or that was given up on). Kept outside the process, so
 * deliveries pending while a receiver is down survive a restart or a new leader.
 */
export interface DeliveryCursors {
  load(): Promise<Map<string, number>>;
  save(cursors: ReadonlyMap<string, number>): Promise<void>;
  close(): Promise<void>;
}

/** Embedded mode: a JSON file in the data folder, replaced atomically. */
export class FileDeliveryCursors implements DeliveryCursors {
  constructor(private readonly path: string) {}

  async load(): Promise<Map<string, number>> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
      throw err;
    }
    return cursorsOf(JSON.parse(text) as Record<string, unknown>);
  }

  async save(cursors: ReadonlyMap<string, number>): Promise<void> {
    const partial = `${this.path}.partial`;
    await writeFile(partial, JSON.stringify(Object.fromEntries(cursors)));
    await rename(partial, this.path);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Cluster mode with Redis: one hash beside the audit stream, shared by the replicas. */
export class RedisDeliveryCursors implements DeliveryCursors {
  constructor(
    private readonly redis: Redis,
    private readonly key: string,
  ) {}

  async load(): Promise<Map<string, number>> {
    return cursorsOf(await this.redis.hgetall(this.key));
  }

  async save(cursors: ReadonlyMap<string, number>): Promise<void> {
    if (cursors.size > 0) await this.redis.hset(this.key, Object.fromEntries(cursors));
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/** Keeps the well-formed entries: a cursor is a non-negative integer. */
function cursorsOf(stored: Record<string, unknown>): Map<string, number> {
  const cursors = new Map<string, number>();
  for (const [receiver, value] of Object.entries(stored)) {
    const seq = Number(value);
    if (Number.isSafeInteger(seq) && seq >= 0) cursors.set(receiver, seq);
  }
  return cursors;
}
