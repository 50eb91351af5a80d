import type { OneTimeUses } from './one-time-uses.js';

/** One process (embedded, file audit log): the claims are kept in memory. */
export class MemoryOneTimeUses implements OneTimeUses {
  /** Claimed keys and when (ms since the epoch) each claim ends. */
  private readonly claimed = new Map<string, number>();

  constructor(private readonly clock: () => Date) {}

  claim(key: string, until: Date): Promise<boolean> {
    const now = this.clock().getTime();
    // Ended claims go, so the map holds only what may still be tried.
    for (const [k, end] of this.claimed) if (end <= now) this.claimed.delete(k);
    if (this.claimed.has(key)) return Promise.resolve(false);
    this.claimed.set(key, until.getTime());
    return Promise.resolve(true);
  }

  release(key: string): Promise<void> {
    this.claimed.delete(key);
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
