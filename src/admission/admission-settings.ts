/**
 * The fixed names and the settings of Arbiter's two admission webhooks (issue 10): the
 * configuration webhook validates writes of every configuration kind; the
 * governance webhook decides the Kubernetes API requests of identities bound to actors.
 */

/** Paths on the admission HTTPS server. */
export const CONFIGURATION_WEBHOOK_PATH = '/validate/configuration';
export const GOVERNANCE_WEBHOOK_PATH = '/validate/governance';

/** The two cluster-scoped ValidatingWebhookConfigurations the leader keeps. */
export const CONFIGURATION_WEBHOOK_CONFIGURATION = 'arbiter-configuration';
export const GOVERNANCE_WEBHOOK_CONFIGURATION = 'arbiter-governance';
/** Webhook names inside them (must be fully qualified). */
export const CONFIGURATION_WEBHOOK_NAME = 'configuration.governance.arbiter.dev';
export const GOVERNANCE_WEBHOOK_NAME = 'requests.governance.arbiter.dev';

/** Namespaces carrying this label (any value) are never governed. */
export const IGNORE_NAMESPACE_LABEL = 'governance.arbiter.dev/ignore';
/** Set on the configurations the leader manages, so it never touches anything else. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'arbiter';

export const DEFAULT_ADMISSION_PORT = 9443;
export const DEFAULT_ADMISSION_TIMEOUT_SECONDS = 5;
/** The Secret (in Arbiter's namespace) holding the generated CA and serving certificate. */
export const DEFAULT_CERT_SECRET_NAME = 'arbiter-admission-tls';

export type FailurePolicy = 'Fail' | 'Ignore';

/** How the API server reaches the webhooks. */
export type AdmissionEndpoint =
  /** In a cluster: the Service in front of the replicas (clientConfig.service). */
  | { kind: 'service'; namespace: string; name: string; port: number }
  /** A controller outside the cluster (development, tests): clientConfig.url; base like https://127.0.0.1:9443. */
  | { kind: 'url'; url: string };

/** Where the serving certificate comes from. */
export type CertificateSource =
  /** The leader makes a CA and a serving certificate, keeps them in a Secret, renews them. */
  | {
      kind: 'generated';
      secretName: string;
      /** Lifetimes; renewal starts at two thirds of each. */
      caValiditySeconds: number;
      certValiditySeconds: number;
    }
  /**
   * tls.crt and tls.key in a folder (cert-manager's Secret mounted); reloaded when they
   * change. The caBundle is left alone (cert-manager's cainjector fills it in), and the
   * configurations carry `cert-manager.io/inject-ca-from: <injectCaFrom>` when set.
   */
  | { kind: 'directory'; dir: string; injectCaFrom: string | undefined };

/** `arbiter serve` admission options (see serve-options.ts). */
export interface AdmissionOptions {
  port: number;
  endpoint: AdmissionEndpoint;
  timeoutSeconds: number;
  /** The governance webhook's failurePolicy; undefined: Fail on API servers >= 1.28, else Ignore. */
  failurePolicy: FailurePolicy | undefined;
  certificates: CertificateSource;
  /**
   * A ClusterRole that owns both configurations (ownerReferences), so Kubernetes deletes
   * them with it, e.g. on `helm uninstall`; undefined: they stay until deleted.
   */
  ownerClusterRole: string | undefined;
}
