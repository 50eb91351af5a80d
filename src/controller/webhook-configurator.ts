import {
  AdmissionregistrationV1Api,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { AdmissionOptions, FailurePolicy } from '../admission/admission-settings.js';
import { configurationUpdate, isManagedByArbiter } from '../admission/configuration-update.js';
import {
  defaultFailurePolicy,
  failurePolicyRisk,
  supportsMatchConditions,
} from '../admission/failure-policy.js';
import type { ApiResourceList } from '../admission/governed-rules.js';
import { formatServerVersion, type ServerVersion } from '../admission/server-version.js';
import type { ValidatingWebhookConfiguration } from '../admission/validating-webhook-configuration.js';
import {
  configurationWebhook,
  governanceWebhook,
  type ClusterRoleOwner,
  type WebhookConfigurationInput,
} from '../admission/webhook-configurations.js';
import { ArbiterError } from '../model/index.js';
import { ApiDiscovery } from './api-discovery.js';
import { Backoff, DEFAULT_BACKOFF, type BackoffSettings } from './backoff.js';
import { CoalescedTask } from './coalesced-task.js';
import { toArbiterError } from './kube-errors.js';
import { withTimeout } from './with-timeout.js';

export interface WebhookConfiguratorSettings {
  /** How often the leader re-reads API discovery (new CRDs become governed) and re-checks both configurations. */
  discoveryRefreshMs: number;
  /** Bound on each API call. */
  requestTimeoutMs: number;
  backoff: BackoffSettings;
}

export const DEFAULT_WEBHOOK_CONFIGURATOR_SETTINGS: WebhookConfiguratorSettings = {
  discoveryRefreshMs: 60_000,
  requestTimeoutMs: 10_000,
  backoff: DEFAULT_BACKOFF,
};

export interface WebhookConfiguratorDeps {
  kubeConfig: KubeConfig;
  options: AdmissionOptions;
  /** Arbiter's namespace: never governed. */
  ownNamespace: string;
  /** The CA bundle (PEM) the API server must trust; undefined with cert-manager (the cainjector sets it). */
  caBundle: () => string | undefined;
  /** Usernames of the identities bound to actors. */
  boundUsernames: () => readonly string[];
  isLeader: () => boolean;
  logger: Logger;
  clock: () => Date;
  settings?: Partial<WebhookConfiguratorSettings>;
}

export interface WebhookConfiguratorStatus {
  /** Passes that checked both configurations (and wrote what differed) since start. */
  reconciled: number;
  lastReconciledAt: Date | undefined;
  /** Why the last pass failed (it is being retried); undefined after a success. */
  lastError: string | undefined;
  /** Configurations named like Arbiter's but without its label: left alone. */
  notManaged: readonly string[];
  /** Read once per leadership. */
  serverVersion: ServerVersion | undefined;
  governanceFailurePolicy: FailurePolicy | undefined;
}

/** What is read once per leadership: it decides matchConditions and the default failure policy. */
interface ServerFacts {
  version: ServerVersion;
  failurePolicy: FailurePolicy;
}

/** A write the API server did not keep as written (a field it drops): not repeated for the same input. */
interface NormalisedWrite {
  desired: string;
  resourceVersion: string | undefined;
}

/**
 * The leader creates and keeps Arbiter's two ValidatingWebhookConfigurations: on becoming
 * leader, when bindings or the CA change (`changed()`), and every `discoveryRefreshMs` (new
 * resources become governed; drift is repaired). It writes only what differs from the live
 * objects, never touches a configuration without its label, and retries failures with backoff.
 */
export class WebhookConfigurator {
  private readonly settings: WebhookConfiguratorSettings;
  private readonly api: AdmissionregistrationV1Api;
  private readonly rbac: RbacAuthorizationV1Api;
  /** The owning ClusterRole's uid, read once it can be; undefined without --admission-owner-clusterrole. */
  private owner: ClusterRoleOwner | undefined;
  private readonly discovery: ApiDiscovery;
  private readonly task: CoalescedTask;
  private readonly backoff: Backoff;
  private refreshTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private server: ServerFacts | undefined;
  private resources: ApiResourceList[] | undefined;
  private readonly normalised = new Map<string, NormalisedWrite>();
  private state: Omit<WebhookConfiguratorStatus, 'serverVersion' | 'governanceFailurePolicy'> = {
    reconciled: 0,
    lastReconciledAt: undefined,
    lastError: undefined,
    notManaged: [],
  };

  constructor(private readonly deps: WebhookConfiguratorDeps) {
    this.settings = { ...DEFAULT_WEBHOOK_CONFIGURATOR_SETTINGS, ...deps.settings };
    this.api = deps.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    this.rbac = deps.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    this.discovery = new ApiDiscovery(deps.kubeConfig, this.settings.requestTimeoutMs, deps.logger);
    this.backoff = new Backoff(this.settings.backoff);
    this.task = new CoalescedTask(
      () => this.reconcile(),
      10,
      (err) => this.failed(err),
    );
  }

  start(): void {
    this.refreshTimer ??= setInterval(() => this.refreshDiscovery(), this.settings.discoveryRefreshMs);
    this.refreshTimer.unref();
    this.changed();
  }

  startedLeading(): void {
    // A new leadership reads the server afresh: it may have been upgraded meanwhile.
    this.server = undefined;
    this.resources = undefined;
    this.normalised.clear();
    this.task.schedule();
  }

  stoppedLeading(): void {
    this.server = undefined;
  }

  /** Bindings or the CA changed (or a retry is due): reconcile soon, once for a burst. */
  changed(): void {
    if (this.deps.isLeader()) this.task.schedule();
  }

  async close(): Promise<void> {
    clearInterval(this.refreshTimer);
    clearTimeout(this.retryTimer);
    await this.task.close();
  }

  status(): WebhookConfiguratorStatus {
    return {
      ...this.state,
      serverVersion: this.server?.version,
      governanceFailurePolicy: this.server?.failurePolicy,
    };
  }

  private refreshDiscovery(): void {
    this.resources = undefined;
    this.changed();
  }

  private async reconcile(): Promise<void> {
    if (!this.deps.isLeader()) return;
    const common = this.commonInput();
    if (!common) return;
    const input = { ...common, owner: (this.owner ??= await this.readOwner()) };
    const server = (this.server ??= await this.readServer());
    const resources = (this.resources ??= await this.discovery.resourceLists());
    const desired = [
      configurationWebhook(input),
      governanceWebhook({
        ...input,
        serverVersion: server.version,
        failurePolicy: server.failurePolicy,
        ownNamespace: this.deps.ownNamespace,
        boundUsernames: this.deps.boundUsernames(),
        discovery: resources,
      }),
    ];
    const notManaged: string[] = [];
    for (const configuration of desired) {
      // Leadership may move during a pass: the new leader writes, not us.
      if (!this.deps.isLeader()) return;
      if (!(await this.apply(configuration))) notManaged.push(configuration.metadata.name);
    }
    this.succeeded(notManaged);
  }

  /** undefined while a generated CA is not there yet: a configuration without it would fail every call. */
  private commonInput(): WebhookConfigurationInput | undefined {
    const { endpoint, timeoutSeconds, certificates } = this.deps.options;
    const caBundlePem = this.deps.caBundle();
    if (certificates.kind === 'generated' && caBundlePem === undefined) {
      this.deps.logger.debug('webhook configurations wait for the generated CA');
      return undefined;
    }
    const injectCaFrom = certificates.kind === 'directory' ? certificates.injectCaFrom : undefined;
    return { endpoint, timeoutSeconds, caBundlePem, injectCaFrom };
  }

  private async readServer(): Promise<ServerFacts> {
    const version = await this.discovery.serverVersion();
    const failurePolicy = this.deps.options.failurePolicy ?? defaultFailurePolicy(version);
    const facts = {
      server_version: formatServerVersion(version),
      failure_policy: failurePolicy,
      match_conditions: supportsMatchConditions(version),
    };
    const risk = failurePolicyRisk(version, failurePolicy);
    if (risk) this.deps.logger.warn(facts, `ADMISSION: ${risk}`);
    else this.deps.logger.info(facts, 'governance webhook: only bound identities reach Arbiter');
    return { version, failurePolicy };
  }

  /**
   * The ClusterRole that owns the configurations, so that deleting it (helm uninstall)
   * deletes them. Without it they would outlive Arbiter, and the configuration webhook
   * (Fail) would refuse every write of the kept CRDs. A failed read leaves them without an
   * owner for this pass, and is retried on the next.
   */
  private async readOwner(): Promise<ClusterRoleOwner | undefined> {
    const name = this.deps.options.ownerClusterRole;
    if (name === undefined) return undefined;
    try {
      const role = await withTimeout(
        this.rbac.readClusterRole({ name }),
        this.settings.requestTimeoutMs,
        'the API server',
      );
      const uid = role.metadata?.uid;
      return uid ? { name, uid } : undefined;
    } catch (err) {
      this.deps.logger.warn(
        { err, cluster_role: name },
        'cannot read the ClusterRole that should own the webhook configurations; writing them without an owner',
      );
      return undefined;
    }
  }

  /** Creates or updates one configuration; false when it exists without Arbiter's label. */
  private async apply(desired: ValidatingWebhookConfiguration): Promise<boolean> {
    const name = desired.metadata.name;
    const live = await this.read(name);
    if (!live) {
      await this.call(this.api.createValidatingWebhookConfiguration({ body: desired }), `create ${name}`);
      this.deps.logger.info({ configuration: name }, 'webhook configuration created');
      return true;
    }
    if (!isManagedByArbiter(live)) return false;
    const update = configurationUpdate(desired, live);
    if (!update || this.keptAsNormalised(desired, live)) return true;
    const written = await this.call(
      this.api.replaceValidatingWebhookConfiguration({ name, body: update }),
      `update ${name}`,
    );
    this.deps.logger.info({ configuration: name }, 'webhook configuration updated');
    this.rememberIfNormalised(desired, written);
    return true;
  }

  private async read(name: string): Promise<V1ValidatingWebhookConfiguration | undefined> {
    try {
      return await this.call(this.api.readValidatingWebhookConfiguration({ name }), `read ${name}`);
    } catch (err) {
      if (err instanceof ArbiterError && err.code === 'NOT_FOUND') return undefined;
      throw err;
    }
  }

  /**
   * An API server that drops a field (matchConditions with its feature gate off) would make
   * every pass write again; after one such write the same input is left as the server kept it.
   */
  private rememberIfNormalised(
    desired: ValidatingWebhookConfiguration,
    written: V1ValidatingWebhookConfiguration,
  ) {
    const name = desired.metadata.name;
    if (!configurationUpdate(desired, written)) {
      this.normalised.delete(name);
      return;
    }
    this.normalised.set(name, {
      desired: JSON.stringify(desired),
      resourceVersion: written.metadata?.resourceVersion,
    });
    this.deps.logger.warn(
      { configuration: name },
      'the API server did not keep the webhook configuration as written (does it drop matchConditions? ' +
        'they need Kubernetes >= 1.28 with the AdmissionWebhookMatchConditions feature); not rewriting it',
    );
  }

  private keptAsNormalised(
    desired: ValidatingWebhookConfiguration,
    live: V1ValidatingWebhookConfiguration,
  ): boolean {
    const seen = this.normalised.get(desired.metadata.name);
    return (
      seen !== undefined &&
      seen.resourceVersion === live.metadata?.resourceVersion &&
      seen.desired === JSON.stringify(desired)
    );
  }

  private succeeded(notManaged: string[]): void {
    if (notManaged.join() !== this.state.notManaged.join() && notManaged.length > 0)
      this.deps.logger.warn(
        { configurations: notManaged },
        "webhook configurations with Arbiter's names exist without its label; leaving them alone (delete them to let Arbiter manage them)",
      );
    this.backoff.reset();
    this.state = {
      reconciled: this.state.reconciled + 1,
      lastReconciledAt: this.deps.clock(),
      lastError: undefined,
      notManaged,
    };
  }

  private failed(err: unknown): void {
    const delayMs = this.backoff.nextDelayMs();
    this.state = { ...this.state, lastError: err instanceof Error ? err.message : String(err) };
    this.deps.logger.warn(
      { err, retry_in_ms: delayMs },
      'webhook configurations could not be reconciled; retrying',
    );
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.changed(), delayMs);
    this.retryTimer.unref();
  }

  private async call<T>(request: Promise<T>, doing: string): Promise<T> {
    try {
      return await withTimeout(request, this.settings.requestTimeoutMs, 'the API server');
    } catch (err) {
      throw toArbiterError(err, `${doing} (ValidatingWebhookConfiguration)`);
    }
  }
}
