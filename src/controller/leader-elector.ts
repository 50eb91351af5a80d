import { CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { kubeStatusCode } from './kube-errors.js';
import { withTimeout } from './with-timeout.js';

export interface LeaseSettings {
  namespace: string;
  name: string;
  /** This replica's holderIdentity (pod name, or host name and pid). */
  identity: string;
  /** How long a lease holds without renewal before others may take it. */
  leaseDurationMs: number;
  /** The leader steps down when it could not renew for this long (< leaseDurationMs). */
  renewDeadlineMs: number;
  /** Interval between attempts to acquire or renew. */
  retryPeriodMs: number;
}

export const DEFAULT_LEASE_TIMING = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

export interface LeadershipCallbacks {
  onStartedLeading(): void;
  onStoppedLeading(): void;
}

/**
 * Leader election with a coordination.k8s.io/v1 Lease, as client-go does it: optimistic
 * updates guarded by resourceVersion, and expiry judged by when *we* last saw the lease
 * change (local clock only), so clock skew between replicas does not matter.
 */
export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private leader = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private loop: Promise<void> | undefined;
  private lastRenewMs = 0;
  private observed: { record: string; atMs: number } | undefined;

  constructor(
    kubeConfig: KubeConfig,
    private readonly settings: LeaseSettings,
    private readonly callbacks: LeadershipCallbacks,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.api = kubeConfig.makeApiClient(CoordinationV1Api);
  }

  isLeader(): boolean {
    return this.leader;
  }

  start(): void {
    this.tick();
  }

  /** Stops campaigning; a leader releases the lease so another replica takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.loop;
    if (!this.leader) return;
    this.setLeader(false);
    try {
      await this.release();
    } catch (err) {
      this.logger.warn({ err }, 'could not release the leader lease; it will expire');
    }
  }

  private tick(): void {
    if (this.stopped) return;
    this.loop = this.attempt().finally(() => {
      if (this.stopped) return;
      // Jitter only while waiting to acquire, so candidates do not collide.
      const jitter = this.leader ? 0 : Math.random() * 0.2 * this.settings.retryPeriodMs;
      this.timer = setTimeout(() => this.tick(), this.settings.retryPeriodMs + jitter);
    });
  }

  private async attempt(): Promise<void> {
    let ok = false;
    try {
      // Bounded: a hung API server must not keep a leader from stepping down.
      ok = await withTimeout(this.acquireOrRenew(), this.settings.retryPeriodMs * 2, 'lease update');
    } catch (err) {
      // A leader that cannot renew will step down soon: say so now, not only then.
      if (this.leader) this.logger.warn({ err }, 'could not renew the leader lease; retrying');
      else this.logger.debug({ err }, 'lease acquire failed');
    }
    if (this.stopped) return;
    if (ok) {
      this.lastRenewMs = this.now();
      if (!this.leader) this.setLeader(true);
    } else if (this.leader && this.now() - this.lastRenewMs > this.settings.renewDeadlineMs) {
      this.logger.warn('could not renew the leader lease in time: stepping down');
      this.setLeader(false);
    }
  }

  private setLeader(leader: boolean): void {
    if (this.leader === leader) return;
    this.leader = leader;
    const lease = `${this.settings.namespace}/${this.settings.name}`;
    this.logger.info(
      { lease, identity: this.settings.identity },
      leader ? 'became leader' : 'stopped leading',
    );
    if (leader) this.callbacks.onStartedLeading();
    else this.callbacks.onStoppedLeading();
  }

  private async acquireOrRenew(): Promise<boolean> {
    const { namespace, name } = this.settings;
    let lease: V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (kubeStatusCode(err) !== 404) throw err;
      return this.create();
    }
    if (this.heldByAnother(lease)) return false;
    return this.replace(this.takenOrRenewed(lease));
  }

  /** Held by someone else whose renewal we saw change less than a lease duration ago. */
  private heldByAnother(lease: V1Lease): boolean {
    const spec = lease.spec ?? {};
    const record = JSON.stringify([spec.holderIdentity, String(spec.renewTime), spec.leaseTransitions]);
    if (this.observed?.record !== record) this.observed = { record, atMs: this.now() };
    const holder = spec.holderIdentity ?? '';
    const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
    return holder !== '' && holder !== this.settings.identity && this.observed.atMs + durationMs > this.now();
  }

  private takenOrRenewed(lease: V1Lease): V1Lease {
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const now = new V1MicroTime(this.now());
    const taking = holder !== this.settings.identity;
    return {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: this.settings.identity,
        leaseDurationSeconds: Math.ceil(this.settings.leaseDurationMs / 1000),
        renewTime: now,
        acquireTime: taking ? now : (spec.acquireTime ?? now),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (taking && holder !== '' ? 1 : 0),
      },
    };
  }

  private async create(): Promise<boolean> {
    const { namespace, name, identity } = this.settings;
    const now = new V1MicroTime(this.now());
    try {
      await this.api.createNamespacedLease({
        namespace,
        body: {
          metadata: { name, namespace },
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: Math.ceil(this.settings.leaseDurationMs / 1000),
            acquireTime: now,
            renewTime: now,
            leaseTransitions: 0,
          },
        },
      });
      return true;
    } catch (err) {
      if (kubeStatusCode(err) === 409) return false;
      throw err;
    }
  }

  private async replace(lease: V1Lease): Promise<boolean> {
    const { namespace, name } = this.settings;
    try {
      await this.api.replaceNamespacedLease({ name, namespace, body: lease });
      return true;
    } catch (err) {
      // Someone else updated it first: not ours this round.
      if (kubeStatusCode(err) === 409) return false;
      throw err;
    }
  }

  private async release(): Promise<void> {
    const { namespace, name, identity } = this.settings;
    const lease = await this.api.readNamespacedLease({ name, namespace });
    if (lease.spec?.holderIdentity !== identity) return;
    const now = new V1MicroTime(this.now());
    await this.api.replaceNamespacedLease({
      name,
      namespace,
      body: {
        ...lease,
        spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now },
      },
    });
  }
}
