import type { V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ServingCertificates, ServingPair } from '../admission/serving-certificates.js';
import {
  InvalidCertificateError,
  rotate,
  type CertificateState,
  type RotationSettings,
  type ServingNames,
} from '../admission/tls/index.js';
import { ArbiterError } from '../model/index.js';
import { certificateStateOf, loadedTlsOf, tlsSecret } from './admission-tls-secret.js';
import { CoalescedTask } from './coalesced-task.js';
import { ProblemLog } from './problem-log.js';
import type { Secrets } from './secrets.js';
import { ServingState } from './serving-state.js';

export interface SecretServingCertificatesSettings {
  /** How often every replica reads the Secret. */
  pollIntervalMs: number;
  /**
   * How long a new CA sits in the bundle before it signs: every replica, the webhook
   * configurations and the API server must trust it by then. Never less than one poll.
   */
  propagationDelayMs: number;
  /** How long start() waits for a first pair before it logs and returns. */
  startTimeoutMs: number;
}

export const DEFAULT_SECRET_CERTIFICATES_SETTINGS: SecretServingCertificatesSettings = {
  pollIntervalMs: 5_000,
  propagationDelayMs: 30_000,
  startTimeoutMs: 30_000,
};

/** Prefix of the generated CAs' common names. */
export const CA_COMMON_NAME = 'arbiter-admission-ca';

export interface SecretServingCertificatesDeps {
  secrets: Pick<Secrets, 'namespace' | 'get' | 'create' | 'replace'>;
  secretName: string;
  names: ServingNames;
  caValiditySeconds: number;
  certValiditySeconds: number;
  isLeader: () => boolean;
  clock: () => Date;
  logger: Logger;
  settings?: Partial<SecretServingCertificatesSettings>;
}

/**
 * Generated certificates kept in a Secret (layout: admission-tls-secret.ts). Every replica
 * polls the Secret and serves the pair in it; only the leader creates the Secret and
 * renews what is due (tls/rotation.ts), writing with the resourceVersion it read, so a
 * second leader's write makes it re-read rather than overwrite.
 */
export class SecretServingCertificates implements ServingCertificates {
  private readonly settings: SecretServingCertificatesSettings;
  private readonly rotation: RotationSettings;
  private readonly state: ServingState;
  private readonly task: CoalescedTask;
  private readonly problems: ProblemLog;

  constructor(private readonly deps: SecretServingCertificatesDeps) {
    const settings = { ...DEFAULT_SECRET_CERTIFICATES_SETTINGS, ...deps.settings };
    this.settings = settings;
    this.rotation = {
      caCommonName: CA_COMMON_NAME,
      names: deps.names,
      caValiditySeconds: deps.caValiditySeconds,
      certValiditySeconds: deps.certValiditySeconds,
      propagationDelayMs: Math.max(settings.propagationDelayMs, settings.pollIntervalMs),
    };
    if (this.rotation.propagationDelayMs * 3 >= deps.caValiditySeconds * 1000) {
      // The old CA would expire before the new one may sign: the rotation cannot be seamless.
      deps.logger.warn(
        {
          propagation_delay_ms: this.rotation.propagationDelayMs,
          ca_validity_seconds: deps.caValiditySeconds,
        },
        'the CA lifetime is too short for its propagation delay; CA renewals will interrupt admission',
      );
    }
    this.state = new ServingState(deps.logger);
    this.problems = new ProblemLog(deps.logger, { secret: this.secretName() });
    this.task = new CoalescedTask(
      () => this.refresh(),
      settings.pollIntervalMs,
      (err) => this.problems.report('read', 'warn', 'could not read the certificate Secret; retrying', err),
    );
  }

  current(): ServingPair | undefined {
    return this.state.current();
  }

  caBundle(): string | undefined {
    return this.state.caBundle();
  }

  onChange(listener: () => void): () => void {
    return this.state.onChange(listener);
  }

  async start(): Promise<void> {
    this.task.schedule(0);
    if (!(await this.state.waitLoaded(this.settings.startTimeoutMs))) {
      this.deps.logger.warn(
        { secret: this.secretName(), waited_ms: this.settings.startTimeoutMs },
        'no admission serving certificate yet; still trying',
      );
    }
  }

  close(): Promise<void> {
    return this.task.close();
  }

  private async refresh(): Promise<void> {
    try {
      const secret = await this.deps.secrets.get(this.deps.secretName);
      this.problems.resolved('read');
      this.load(this.deps.isLeader() ? await this.upkeep(secret) : secret);
    } finally {
      // The next poll, also after a failure (CoalescedTask runs it once this run ends).
      this.task.schedule();
    }
  }

  /**
   * The leader's part: create or renew what is due. Returns the Secret as it now is, or
   * as it was read when the renewal failed (still worth serving).
   */
  private async upkeep(secret: V1Secret | undefined): Promise<V1Secret | undefined> {
    try {
      const written = await this.renew(secret);
      this.problems.resolved('renew');
      return written;
    } catch (err) {
      this.problems.report('renew', 'warn', 'could not renew the admission certificates; retrying', err);
      return secret;
    }
  }

  private async renew(secret: V1Secret | undefined): Promise<V1Secret | undefined> {
    const now = this.deps.clock();
    const step = await rotate(this.stateOf(secret), now, this.rotation);
    if (!step) return secret;
    const target = { name: this.deps.secretName, namespace: this.deps.secrets.namespace };
    const body = tlsSecret(target, step.state, now, secret);
    try {
      const written = secret ? await this.deps.secrets.replace(body) : await this.deps.secrets.create(body);
      this.deps.logger.info(
        {
          secret: this.secretName(),
          changes: step.changes,
          resource_version: written.metadata?.resourceVersion,
        },
        'admission certificates updated',
      );
      return written;
    } catch (err) {
      if (!(err instanceof ArbiterError && err.code === 'CONFLICT')) throw err;
      // Another leader wrote since our read (a leadership handover): theirs stands.
      this.deps.logger.info(
        { secret: this.secretName() },
        'the certificate Secret changed under us; reading it again',
      );
      return this.deps.secrets.get(this.deps.secretName);
    }
  }

  private stateOf(secret: V1Secret | undefined): CertificateState | undefined {
    if (!secret) return undefined;
    try {
      return certificateStateOf(secret);
    } catch (err) {
      if (!(err instanceof InvalidCertificateError)) throw err;
      this.problems.report(
        'unusable',
        'error',
        'the certificate Secret is unusable; replacing it with a new CA',
        err,
      );
      return undefined;
    }
  }

  /** Serves the pair in the Secret; a missing or broken one keeps the previous pair. */
  private load(secret: V1Secret | undefined): void {
    if (!secret) {
      this.problems.report(
        'load',
        'warn',
        'the certificate Secret does not exist yet; the leader creates it',
      );
      return;
    }
    try {
      const { pair, caBundle } = loadedTlsOf(secret);
      if (this.state.set(pair, caBundle)) {
        this.deps.logger.info(
          { secret: this.secretName(), resource_version: secret.metadata?.resourceVersion },
          'serving a new admission certificate',
        );
      }
      this.problems.resolved('load');
      this.problems.resolved('unusable');
    } catch (err) {
      if (!(err instanceof InvalidCertificateError)) throw err;
      this.problems.report(
        'load',
        'error',
        'the certificate Secret is unusable; keeping the current certificate',
        err,
      );
    }
  }

  private secretName(): string {
    return `${this.deps.secrets.namespace}/${this.deps.secretName}`;
  }
}
