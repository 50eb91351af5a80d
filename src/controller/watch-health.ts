import type { Logger } from 'pino';
import { KINDS, type Kind } from '../model/index.js';
import type { KindWatcher } from './kind-watcher.js';

/**
 * Says loudly when a watch has been broken for long: the index is then stale (still
 * served, on purpose), and operators must know. Counts each such episode per kind.
 */
export class WatchHealth {
  private timer: NodeJS.Timeout | undefined;
  /** brokenSince of the episode already reported, per kind. */
  private readonly reported = new Map<Kind, number>();
  private readonly counts = Object.fromEntries(KINDS.map((kind) => [kind, 0])) as Record<Kind, number>;

  constructor(
    private readonly watchers: readonly KindWatcher[],
    private readonly deps: { alertAfterMs: number; clock: () => number; logger: Logger },
  ) {}

  start(): void {
    const everyMs = Math.max(250, Math.min(5_000, this.deps.alertAfterMs / 4));
    this.timer = setInterval(() => this.check(), everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  alerts(): Readonly<Record<Kind, number>> {
    return { ...this.counts };
  }

  check(): void {
    const now = this.deps.clock();
    for (const watcher of this.watchers) {
      const { brokenSinceMs, lastError, state } = watcher.status();
      if (brokenSinceMs === undefined || state === 'stopped') continue;
      if (now - brokenSinceMs < this.deps.alertAfterMs || this.reported.get(watcher.kind) === brokenSinceMs)
        continue;
      this.reported.set(watcher.kind, brokenSinceMs);
      this.counts[watcher.kind] += 1;
      this.deps.logger.error(
        {
          kind: watcher.kind,
          broken_ms: now - brokenSinceMs,
          last_error: lastError,
          stale_index: watcher.hasSynced,
        },
        `watch of ${watcher.kind} broken for ${Math.round((now - brokenSinceMs) / 1000)} s: ` +
          (watcher.hasSynced ? 'serving the last good index' : 'never synced'),
      );
    }
  }
}
