import {
  ListWatch,
  Watch,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Kind } from '../model/index.js';
import { Backoff, type BackoffSettings } from './backoff.js';
import { collectionPath, type RawObject } from './resources.js';

/** The states of one kind's watch; every transition goes through `setState`. */
export type WatchState =
  /** Never listed successfully yet. */
  | 'starting'
  /** Listed, and the watch is running. */
  | 'synced'
  /** The watch failed; serving the last listed objects while reconnecting with backoff. */
  | 'broken'
  | 'stopped';

export interface KindWatcherSettings {
  backoff: BackoffSettings;
  /** A fresh list+watch replaces a watch this old (a silently dead connection must not last). */
  refreshAfterMs: number;
}

export interface KindWatcherDeps {
  kind: Kind;
  kubeConfig: KubeConfig;
  list: () => Promise<KubernetesListObject<KubernetesObject>>;
  /** Called after anything that may have changed `objects()`. */
  onChange: (kind: Kind) => void;
  /** Called with the final state of each object a watch event deletes. */
  onDelete?: (object: KubernetesObject) => void;
  logger: Logger;
  clock: () => number;
  settings: KindWatcherSettings;
}

/**
 * One informer (ListWatch) for one kind, kept alive: after any failure (dropped watch
 * that cannot resume, API server outage, refused list) it starts a fresh informer with
 * backoff and jitter. A fresh informer lists first, so it resyncs completely, deletions
 * included; until it has, the previous informer's objects stay in use.
 */
export class KindWatcher {
  private state: WatchState = 'starting';
  /** The informer whose cache is served: the last one that listed successfully. */
  private current: ListWatch<KubernetesObject> | undefined;
  private attempt: ListWatch<KubernetesObject> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private readonly backoff: Backoff;
  private brokenSinceMs: number | undefined;
  private lastError: string | undefined;
  /** Failed watches or lists that made it start a fresh informer (for metrics). */
  private restarts = 0;

  constructor(private readonly deps: KindWatcherDeps) {
    this.backoff = new Backoff(deps.settings.backoff);
  }

  get kind(): Kind {
    return this.deps.kind;
  }

  status(): {
    state: WatchState;
    brokenSinceMs: number | undefined;
    lastError: string | undefined;
    restarts: number;
  } {
    return {
      state: this.state,
      brokenSinceMs: this.brokenSinceMs,
      lastError: this.lastError,
      restarts: this.restarts,
    };
  }

  /** True once a list has succeeded: `objects()` is then a complete (maybe stale) view. */
  get hasSynced(): boolean {
    return this.current !== undefined;
  }

  objects(): readonly RawObject[] {
    return (this.current?.list() ?? []) as readonly RawObject[];
  }

  /** One object of the cache by name (the kinds are cluster-scoped). */
  object(name: string): RawObject | undefined {
    return this.current?.get(name) as RawObject | undefined;
  }

  start(): void {
    void this.connect();
  }

  async stop(): Promise<void> {
    this.setState('stopped');
    clearTimeout(this.retryTimer);
    clearTimeout(this.refreshTimer);
    const informers = [this.attempt, this.current].filter((i) => i !== undefined);
    this.attempt = undefined;
    await Promise.all(informers.map((i) => i.stop()));
  }

  private async connect(): Promise<void> {
    if (this.state === 'stopped') return;
    const informer = new ListWatch<KubernetesObject>(
      collectionPath(this.deps.kind),
      new Watch(this.deps.kubeConfig),
      async () => {
        const list = await this.deps.list();
        list.items.forEach(dropManagedFields);
        return list;
      },
      false,
    );
    this.attempt = informer;
    let failedWhileStarting = false;
    const changed = (object?: KubernetesObject) => {
      // The informer caches the object it hands out, so this trims the cache too.
      if (object) dropManagedFields(object);
      if (informer === this.current) this.deps.onChange(this.deps.kind);
    };
    informer.on('add', changed);
    informer.on('update', changed);
    informer.on('delete', (object) => {
      if (informer === this.current) this.deps.onDelete?.(object);
      changed(object);
    });
    informer.on('error', (err: unknown) => {
      failedWhileStarting = true;
      this.failed(informer, err);
    });
    try {
      // Resolves once the list is in and the watch request is open, or after a failure was reported.
      await informer.start();
    } catch (err) {
      this.failed(informer, err);
      return;
    }
    if (failedWhileStarting || informer !== this.attempt || this.isStopped()) return;
    this.synced(informer);
  }

  private synced(informer: ListWatch<KubernetesObject>): void {
    const previous = this.current;
    this.current = informer;
    this.attempt = undefined;
    if (previous && previous !== informer) void previous.stop();
    const wasBroken = this.state === 'broken';
    this.setState('synced');
    this.backoff.reset();
    if (wasBroken)
      this.deps.logger.info(
        { kind: this.deps.kind, broken_ms: this.deps.clock() - (this.brokenSinceMs ?? this.deps.clock()) },
        'watch restored and resynced',
      );
    this.brokenSinceMs = undefined;
    this.lastError = undefined;
    this.deps.onChange(this.deps.kind);
    this.scheduleRefresh();
  }

  private failed(informer: ListWatch<KubernetesObject>, err: unknown): void {
    if (this.state === 'stopped') return;
    // Only the informer in charge may trigger a reconnect; a replaced one just goes away.
    if (informer !== this.current && informer !== this.attempt) return;
    void informer.stop();
    if (informer === this.attempt) this.attempt = undefined;
    this.lastError = err instanceof Error ? err.message : String(err);
    if (this.brokenSinceMs === undefined) {
      this.brokenSinceMs = this.deps.clock();
      this.deps.logger.warn({ kind: this.deps.kind, err }, 'watch failed: reconnecting with backoff');
    } else {
      this.deps.logger.debug({ kind: this.deps.kind, err }, 'reconnecting the watch failed');
    }
    this.setState(this.current ? 'broken' : 'starting');
    this.restarts += 1;
    this.scheduleRetry(this.backoff.nextDelayMs());
  }

  private scheduleRetry(delayMs: number): void {
    clearTimeout(this.retryTimer);
    clearTimeout(this.refreshTimer);
    this.retryTimer = setTimeout(() => void this.connect(), delayMs);
  }

  /** Periodic full resync, jittered: guards against a watch that died without an error. */
  private scheduleRefresh(): void {
    clearTimeout(this.refreshTimer);
    const delayMs = this.deps.settings.refreshAfterMs * (0.75 + 0.5 * Math.random());
    this.refreshTimer = setTimeout(() => void this.connect(), delayMs);
    this.refreshTimer.unref();
  }

  // A method, not a field test: TypeScript would narrow `state` across the awaits above.
  private isStopped(): boolean {
    return this.state === 'stopped';
  }

  private setState(next: WatchState): void {
    if (this.state === 'stopped') return;
    this.state = next;
  }
}

/**
 * Server-side apply bookkeeping: nothing here reads it, and it is often larger than the
 * spec (one entry per field manager). Dropping it from the cached objects saves tens of MB
 * at 20,000 objects.
 */
function dropManagedFields(object: KubernetesObject): void {
  if (object.metadata) delete object.metadata.managedFields;
}
