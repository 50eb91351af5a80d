import { DeletionNotes } from './deletion-notes.js';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ReadinessCheck } from '../api/dependencies.js';
import type { ConfigAuditor } from '../governance/config-auditor.js';
import type { ConfigWriter } from '../governance/config-writer.js';
import type { IndexSnapshot, IndexStore } from '../index/index.js';
import { KINDS, type Kind } from '../model/index.js';
import { DEFAULT_BACKOFF } from './backoff.js';
import { CoalescedTask } from './coalesced-task.js';
import { CustomObjects } from './custom-objects.js';
import { EventRecorder } from './event-recorder.js';
import { KindWatcher, type KindWatcherSettings } from './kind-watcher.js';
import { KubernetesWrites } from './kubernetes-writes.js';
import { LeaderDuties, type PublishedState } from './leader-duties.js';
import { DEFAULT_LEASE_TIMING, LeaderElector, type LeaseSettings } from './leader-elector.js';
import type { RawObject } from './resources.js';
import { StatusWriter } from './status-writer.js';
import { ToolDefinitionConditions } from './tool-definition-conditions.js';
import { ValidatedObjects } from './validated-objects.js';
import { VersionWaiters } from './version-waiters.js';
import { WatchHealth } from './watch-health.js';

export interface KubernetesConfigSettings {
  /** Events arriving within this window become one index rebuild. */
  rebuildDelayMs: number;
  /** Bound on each API call the controller makes. */
  requestTimeoutMs: number;
  /** How long an API write waits for its object to reach this replica's index (then 503). */
  readYourWritesTimeoutMs: number;
  /** start() waits this long for the first sync before serving anyway (not ready). */
  initialSyncTimeoutMs: number;
  /** A watch broken for longer than this is logged and counted. */
  brokenWatchAlertMs: number;
  watch: KindWatcherSettings;
  lease: Pick<LeaseSettings, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'>;
}

export const DEFAULT_KUBERNETES_CONFIG_SETTINGS: KubernetesConfigSettings = {
  rebuildDelayMs: 20,
  requestTimeoutMs: 10_000,
  readYourWritesTimeoutMs: 5_000,
  initialSyncTimeoutMs: 10_000,
  brokenWatchAlertMs: 30_000,
  watch: { backoff: DEFAULT_BACKOFF, refreshAfterMs: 10 * 60_000 },
  lease: DEFAULT_LEASE_TIMING,
};

export interface KubernetesConfigDeps {
  kubeConfig: KubeConfig;
  index: IndexStore;
  auditor: ConfigAuditor;
  lease: Pick<LeaseSettings, 'namespace' | 'name' | 'identity'>;
  logger: Logger;
  clock: () => Date;
  settings?: Partial<KubernetesConfigSettings>;
}

/**
 * Configuration from the cluster: one informer per kind feeds the index (coalesced
 * rebuilds, published only once every kind has synced); the leader writes statuses and
 * audits changes; API writes become custom resources. While the API server is away the
 * last good index keeps serving decisions.
 */
export class KubernetesConfig implements ConfigWriter {
  private readonly settings: KubernetesConfigSettings;
  private readonly watchers: KindWatcher[];
  private readonly validated = new ValidatedObjects();
  private readonly waiters: VersionWaiters;
  private readonly rebuild: CoalescedTask;
  private readonly elector: LeaderElector;
  private readonly duties: LeaderDuties;
  private readonly writes: KubernetesWrites;
  private readonly health: WatchHealth;
  private published: PublishedState | undefined;
  private readonly leadershipListeners = new Set<(leading: boolean) => void>();
  private firstPublish: () => void = () => undefined;
  /** Where the tool proxy shows on a pinned Capability whether its tool is as pinned. */
  readonly toolDefinitionConditions: ToolDefinitionConditions;
  private readonly firstPublished = new Promise<void>((resolve) => (this.firstPublish = resolve));

  constructor(private readonly deps: KubernetesConfigDeps) {
    this.settings = { ...DEFAULT_KUBERNETES_CONFIG_SETTINGS, ...deps.settings };
    const logger = deps.logger;
    const objects = new CustomObjects(deps.kubeConfig, this.settings.requestTimeoutMs);
    const deletions = new DeletionNotes(() => deps.clock().getTime());
    this.toolDefinitionConditions = new ToolDefinitionConditions({
      objects,
      cached: (name) => this.watcherOf('Capability').object(name),
      clock: deps.clock,
      logger: logger.child({ component: 'tool-definitions' }),
    });
    this.waiters = new VersionWaiters(this.settings.readYourWritesTimeoutMs);
    this.rebuild = new CoalescedTask(
      () => this.rebuildIndex(),
      this.settings.rebuildDelayMs,
      (err) => logger.error({ err }, 'index rebuild failed; keeping the previous index'),
    );
    this.watchers = KINDS.map(
      (kind) =>
        new KindWatcher({
          kind,
          kubeConfig: deps.kubeConfig,
          list: () => objects.list(kind),
          onChange: () => this.rebuild.schedule(),
          onDelete: (object) => deletions.noteDeleted(kind, object),
          logger: logger.child({ component: 'informer' }),
          clock: () => deps.clock().getTime(),
          settings: this.settings.watch,
        }),
    );
    this.health = new WatchHealth(this.watchers, {
      alertAfterMs: this.settings.brokenWatchAlertMs,
      clock: () => deps.clock().getTime(),
      logger,
    });
    const identity = deps.lease.identity;
    this.duties = new LeaderDuties({
      auditor: deps.auditor,
      statusWriter: new StatusWriter({
        objects,
        events: new EventRecorder(deps.kubeConfig, {
          component: 'arbiter-controller',
          instance: identity,
          logger,
          clock: deps.clock,
        }),
        logger: logger.child({ component: 'status' }),
        clock: deps.clock,
      }),
      isLeader: () => this.elector.isLeader(),
      published: () => this.published,
      deletedBy: (key) => deletions.callerOf(key),
      logger: logger.child({ component: 'leader' }),
    });
    this.elector = new LeaderElector(
      deps.kubeConfig,
      { ...deps.lease, ...this.settings.lease },
      {
        onStartedLeading: () => {
          this.duties.startedLeading();
          this.notifyLeadership(true);
        },
        onStoppedLeading: () => {
          this.duties.stoppedLeading();
          this.notifyLeadership(false);
        },
      },
      logger.child({ component: 'leader-election' }),
    );
    this.writes = new KubernetesWrites({
      objects,
      waiters: this.waiters,
      snapshot: () => this.published?.snapshot,
      actorGrants: (kind) => this.watcherOf(kind).objects(),
      clock: deps.clock,
    });
  }

  /** Starts the informers and the election; waits (bounded) for the first complete sync. */
  async start(): Promise<void> {
    for (const watcher of this.watchers) watcher.start();
    this.health.start();
    this.elector.start();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), this.settings.initialSyncTimeoutMs);
    });
    const late = await Promise.race([this.firstPublished.then(() => false), timedOut]);
    clearTimeout(timer);
    if (late)
      this.deps.logger.warn(
        { waited_ms: this.settings.initialSyncTimeoutMs },
        'configuration not synced from Kubernetes yet: serving, not ready',
      );
  }

  async close(): Promise<void> {
    this.health.stop();
    await this.elector.stop();
    await this.duties.close();
    await Promise.all(this.watchers.map((w) => w.stop()));
    await this.rebuild.close();
    this.waiters.rejectAll(new Error('shutting down'));
  }

  isLeader(): boolean {
    return this.elector.isLeader();
  }

  /** Called when this replica gains (true) or loses (false) the lead; returns unsubscribe. */
  onLeadership(listener: (leading: boolean) => void): () => void {
    this.leadershipListeners.add(listener);
    return () => this.leadershipListeners.delete(listener);
  }

  private notifyLeadership(leading: boolean): void {
    for (const listener of this.leadershipListeners) {
      try {
        listener(leading);
      } catch (err) {
        this.deps.logger.error({ err }, 'a leadership listener failed');
      }
    }
  }

  /** Each kind's watch: broken now, and how often it restarted (for metrics). */
  watchStatuses(): Array<{ kind: Kind; broken: boolean; restarts: number }> {
    return this.watchers.map((w) => {
      const { state, restarts } = w.status();
      return { kind: w.kind, broken: state === 'broken', restarts };
    });
  }

  /** How often each kind's watch was reported broken for long (for metrics). */
  brokenWatchAlerts(): Readonly<Record<Kind, number>> {
    return this.health.alerts();
  }

  readiness(): ReadinessCheck {
    return {
      name: 'kubernetes',
      check: () => {
        if (!this.published) {
          const waiting = this.watchers.filter((w) => !w.hasSynced).map((w) => describeWatch(w));
          return { ready: false, message: `waiting for the first list of ${waiting.join(', ')}` };
        }
        const broken = this.watchers
          .filter((w) => w.status().state === 'broken')
          .map((w) => describeWatch(w));
        const role = this.elector.isLeader() ? 'leader' : 'follower';
        return broken.length === 0
          ? { ready: true, message: `synced (${role})` }
          : {
              ready: true,
              message: `serving the last good index; watch broken: ${broken.join(', ')} (${role})`,
            };
      },
    };
  }

  registerCapability(...args: Parameters<ConfigWriter['registerCapability']>) {
    return this.writes.registerCapability(...args);
  }

  createPolicy(...args: Parameters<ConfigWriter['createPolicy']>) {
    return this.writes.createPolicy(...args);
  }

  updatePolicy(...args: Parameters<ConfigWriter['updatePolicy']>) {
    return this.writes.updatePolicy(...args);
  }

  grant(...args: Parameters<ConfigWriter['grant']>) {
    return this.writes.grant(...args);
  }

  revoke(...args: Parameters<ConfigWriter['revoke']>) {
    return this.writes.revoke(...args);
  }

  deletePolicy(...args: Parameters<ConfigWriter['deletePolicy']>) {
    return this.writes.deletePolicy(...args);
  }

  deleteCapability(...args: Parameters<ConfigWriter['deleteCapability']>) {
    return this.writes.deleteCapability(...args);
  }

  /** All-or-nothing: the index only changes when the whole rebuild succeeded. */
  private rebuildIndex(): void {
    // A partial index (say, grants without the policies that restrict them) must never serve.
    if (!this.watchers.every((w) => w.hasSynced)) return;
    const rawByKind = new Map<Kind, readonly RawObject[]>(this.watchers.map((w) => [w.kind, w.objects()]));
    const set = this.validated.update(rawByKind);
    const before = this.deps.index.current();
    let snapshot: IndexSnapshot;
    try {
      snapshot = this.deps.index.replace(set.objects);
    } catch (err) {
      // The swap stands when only a change listener failed (IndexStore's contract).
      if (this.deps.index.current() === before) throw err;
      this.deps.logger.error({ err }, 'an index change listener failed');
      snapshot = this.deps.index.current();
    }
    const first = this.published === undefined;
    this.published = { rawByKind, snapshot, problems: set.problems };
    this.waiters.processed(set.versions);
    if (first) {
      this.deps.logger.info({ objects: set.objects.length }, 'configuration synced from Kubernetes');
      this.firstPublish();
    }
    this.duties.changed();
  }

  private watcherOf(kind: Kind): KindWatcher {
    return this.watchers.find((w) => w.kind === kind)!;
  }
}

function describeWatch(watcher: KindWatcher): string {
  const { lastError } = watcher.status();
  return lastError ? `${watcher.kind} (${lastError})` : watcher.kind;
}
