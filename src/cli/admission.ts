import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { admissionHandler } from '../admission/admission-handler.js';
import type { AdmissionOptions } from '../admission/admission-settings.js';
import { startAdmissionServer, type AdmissionServer } from '../admission/admission-server.js';
import { reviewConfiguration } from '../admission/configuration-review.js';
import { reviewGovernedRequest } from '../admission/governance-review.js';
import type { ServingCertificates } from '../admission/serving-certificates.js';
import { ownUsername } from '../controller/own-username.js';
import { WebhookConfigurator } from '../controller/webhook-configurator.js';
import type { InPathDecisions } from '../governance/in-path-decisions.js';
import type { IndexSnapshot, IndexStore } from '../index/index.js';
import type { Metrics } from '../metrics/index.js';
import { servingCertificates } from './serving-certificates.js';

export interface AdmissionDeps {
  options: AdmissionOptions;
  kubeConfig: KubeConfig;
  /** Arbiter's namespace (the Lease's): never governed; the certificate Secret lives there. */
  namespace: string;
  host: string;
  index: IndexStore;
  decisions: InPathDecisions;
  ready: () => boolean;
  isLeader: () => boolean;
  onLeadership: (listener: (leading: boolean) => void) => () => void;
  metrics: Metrics;
  logger: Logger;
  clock: () => Date;
  /** How long closing waits for reviews under way (the server's --shutdown-grace). */
  closeGraceMs: number;
}

/** The admission webhooks of one replica: certificates, the HTTPS server, and (leader) the configurations. */
export interface Admission {
  start(): Promise<void>;
  /** The HTTPS port, once started. */
  port(): number | undefined;
  close(): Promise<void>;
}

export function openAdmission(deps: AdmissionDeps): Admission {
  const logger = deps.logger.child({ component: 'admission' });
  const certificates: ServingCertificates = servingCertificates(deps, logger);
  const configurator = new WebhookConfigurator({
    kubeConfig: deps.kubeConfig,
    options: deps.options,
    ownNamespace: deps.namespace,
    caBundle: () => certificates.caBundle(),
    boundUsernames: () => deps.index.current().boundIdentities(),
    isLeader: deps.isLeader,
    logger: logger.child({ component: 'webhook-configurator' }),
    clock: deps.clock,
  });
  const own = ownUsername(deps.kubeConfig);
  if (own === undefined)
    logger.warn(
      "cannot tell Arbiter's own username; its own writes pass the configuration webhook like anyone's",
    );
  const exemptNamespaces = new Set(['kube-system', deps.namespace]);
  const handler = admissionHandler({
    reviewers: {
      configuration: (request) => reviewConfiguration(request, deps.index.current(), own),
      governance: (request) =>
        reviewGovernedRequest(request, { index: deps.index, decisions: deps.decisions, exemptNamespaces }),
    },
    ready: deps.ready,
    observer: {
      answered: (webhook, operation, outcome, seconds) => {
        deps.metrics.admissionRequests.inc({ webhook, operation, outcome });
        deps.metrics.admissionSeconds.observe({ webhook }, seconds);
      },
    },
    logger,
  });
  let server: AdmissionServer | undefined;
  let serving: Promise<void> | undefined;
  const unsubscribers: Array<() => void> = [];
  // The HTTPS server needs a pair; a follower may wait for the leader to make the first one.
  const serveOnceCertified = () => {
    if (serving || !certificates.current()) return;
    serving = startAdmissionServer({
      port: deps.options.port,
      host: deps.host,
      certificates,
      handler,
      logger,
      closeGraceMs: deps.closeGraceMs,
    }).then(
      (started) => void (server = started),
      (err: unknown) => {
        serving = undefined;
        logger.error({ err }, 'the admission webhooks cannot listen');
      },
    );
  };
  return {
    async start() {
      unsubscribers.push(
        certificates.onChange(() => {
          serveOnceCertified();
          configurator.changed();
        }),
        deps.index.onChange((next, previous) => {
          if (!sameBindings(next, previous)) configurator.changed();
        }),
        deps.onLeadership((leading) =>
          leading ? configurator.startedLeading() : configurator.stoppedLeading(),
        ),
      );
      configurator.start();
      if (deps.isLeader()) configurator.startedLeading();
      await certificates.start();
      serveOnceCertified();
      if (serving) await serving;
      else
        logger.warn('no admission serving certificate yet: the webhooks listen once the leader has made one');
    },
    port: () => server?.port,
    async close() {
      for (const unsubscribe of unsubscribers) unsubscribe();
      await serving;
      await server?.close();
      await configurator.close();
      await certificates.close();
    },
  };
}

function sameBindings(a: IndexSnapshot, b: IndexSnapshot): boolean {
  const [x, y] = [a.boundIdentities(), b.boundIdentities()];
  return x.length === y.length && x.every((username, i) => username === y[i]);
}
