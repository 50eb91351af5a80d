interface Waiter<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit: items submitted while a flush is in flight wait and go out together in
 * the next flush, so one write+fsync serves many callers. Flushes never overlap. If a
 * flush throws, every item of that batch rejects with the error.
 */
export class GroupCommit<T, R> {
  private pending: Waiter<T, R>[] = [];
  private running: Promise<void> | undefined;
  /** Set while exclusive work runs: submitted items wait, no flush starts. */
  private paused: Promise<void> | undefined;

  constructor(
    private readonly flush: (batch: T[]) => Promise<R[]>,
    private readonly maxBatch: number,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      // While paused, run() stops before any flush, and exclusive() starts one as it ends.
      this.running ??= this.run();
    });
  }

  /** Resolves once nothing is queued or in flight. */
  async drain(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * Runs work with no flush in flight or starting (a file swapped under the writer):
   * items submitted meanwhile wait and go out after it. Exclusive runs take turns.
   */
  async exclusive<R2>(work: () => Promise<R2>): Promise<R2> {
    while (this.paused) await this.paused;
    let resume!: () => void;
    this.paused = new Promise<void>((resolve) => (resume = resolve));
    try {
      await this.drain();
      return await work();
    } finally {
      this.paused = undefined;
      resume();
      if (this.pending.length > 0) this.running ??= this.run();
    }
  }

  private async run(): Promise<void> {
    // One microtask: callers submitting in the same tick join the first batch.
    await Promise.resolve();
    while (this.pending.length > 0 && !this.paused) {
      const batch = this.pending.splice(0, this.maxBatch);
      try {
        const results = await this.flush(batch.map((w) => w.item));
        batch.forEach((w, i) => w.resolve(results[i]!));
      } catch (err) {
        batch.forEach((w) => w.reject(err));
      }
    }
    this.running = undefined;
  }
}
