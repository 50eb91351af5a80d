import {
  CONFIGURATION_WEBHOOK_CONFIGURATION,
  CONFIGURATION_WEBHOOK_NAME,
  CONFIGURATION_WEBHOOK_PATH,
  GOVERNANCE_WEBHOOK_CONFIGURATION,
  GOVERNANCE_WEBHOOK_NAME,
  GOVERNANCE_WEBHOOK_PATH,
  IGNORE_NAMESPACE_LABEL,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  type AdmissionEndpoint,
  type FailurePolicy,
} from './admission-settings.js';
import { boundIdentitiesCondition } from './bound-identities-condition.js';
import { supportsMatchConditions } from './failure-policy.js';
import { governedRules, type ApiResourceList } from './governed-rules.js';
import type { ServerVersion } from './server-version.js';
import type {
  ValidatingWebhook,
  ValidatingWebhookConfiguration,
  WebhookClientConfig,
} from './validating-webhook-configuration.js';

export { defaultFailurePolicy } from './failure-policy.js';

/** cert-manager's cainjector fills the caBundle of objects carrying this annotation. */
export const INJECT_CA_ANNOTATION = 'cert-manager.io/inject-ca-from';
/** Kubernetes sets it on every namespace from 1.21 on. */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

export interface WebhookConfigurationInput {
  endpoint: AdmissionEndpoint;
  timeoutSeconds: number;
  /** The CA bundle (PEM); undefined leaves it to someone else, such as cert-manager's cainjector. */
  caBundlePem: string | undefined;
  /** NAMESPACE/CERTIFICATE for INJECT_CA_ANNOTATION; undefined: no annotation. */
  injectCaFrom: string | undefined;
  /** The ClusterRole whose deletion deletes the configurations; undefined: no owner. */
  owner?: ClusterRoleOwner | undefined;
}

export interface ClusterRoleOwner {
  name: string;
  uid: string;
}

/** The ownerReference to a ClusterRole: garbage collection deletes the dependents with it. */
export function ownerReference(owner: ClusterRoleOwner) {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    name: owner.name,
    uid: owner.uid,
  };
}

export interface GovernanceWebhookInput extends WebhookConfigurationInput {
  serverVersion: ServerVersion;
  failurePolicy: FailurePolicy;
  /** Arbiter's own namespace: never governed. */
  ownNamespace: string;
  /** Usernames of the identities bound to actors (matchConditions on servers >= 1.28). */
  boundUsernames: readonly string[];
  /** The server's resource lists, from which the rules are built. */
  discovery: readonly ApiResourceList[];
}

/** The plurals of every configuration kind (the controller's PLURALS), sorted. */
export const CONFIGURATION_RESOURCES = [
  'actorgrants',
  'capabilities',
  'delegations',
  'namespacedactorgrants',
  'namespacedpolicies',
  'policies',
] as const;

/**
 * `arbiter-configuration`: writes of every configuration kind (the tenancy kinds too) are
 * validated like the index validates them. Fail: only Arbiter's own API group depends on it.
 */
export function configurationWebhook(input: WebhookConfigurationInput): ValidatingWebhookConfiguration {
  return configuration(CONFIGURATION_WEBHOOK_CONFIGURATION, input, {
    name: CONFIGURATION_WEBHOOK_NAME,
    clientConfig: clientConfig(input, CONFIGURATION_WEBHOOK_PATH),
    rules: [
      {
        apiGroups: ['governance.arbiter.dev'],
        apiVersions: ['*'],
        operations: ['CREATE', 'UPDATE'],
        resources: [...CONFIGURATION_RESOURCES],
        // Delegation is cluster-scoped, NamespacedPolicy and NamespacedActorGrant are not.
        scope: '*',
      },
    ],
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    namespaceSelector: {},
    objectSelector: {},
    sideEffects: 'None',
    timeoutSeconds: input.timeoutSeconds,
    admissionReviewVersions: ['v1'],
  });
}

/**
 * `arbiter-governance`: the Kubernetes API writes of bound identities become decisions.
 * Every resource discovery lists, except what the cluster itself depends on (governedRules),
 * in every namespace except kube-system, Arbiter's own and the ones labelled to be ignored.
 */
export function governanceWebhook(input: GovernanceWebhookInput): ValidatingWebhookConfiguration {
  const webhook: ValidatingWebhook = {
    name: GOVERNANCE_WEBHOOK_NAME,
    clientConfig: clientConfig(input, GOVERNANCE_WEBHOOK_PATH),
    rules: governedRules(input.discovery),
    failurePolicy: input.failurePolicy,
    matchPolicy: 'Equivalent',
    namespaceSelector: {
      matchExpressions: [
        // Namespaces carry this label only from Kubernetes 1.21; the admission handler
        // checks the namespace itself too, so older servers are covered while Arbiter answers.
        {
          key: NAMESPACE_NAME_LABEL,
          operator: 'NotIn',
          values: [...new Set(['kube-system', input.ownNamespace])].sort(),
        },
        { key: IGNORE_NAMESPACE_LABEL, operator: 'DoesNotExist' },
      ],
    },
    objectSelector: {},
    sideEffects: 'NoneOnDryRun',
    timeoutSeconds: input.timeoutSeconds,
    admissionReviewVersions: ['v1'],
  };
  // 1.20 refuses an unknown matchConditions field, so it is absent below 1.28.
  if (supportsMatchConditions(input.serverVersion))
    webhook.matchConditions = [boundIdentitiesCondition(input.boundUsernames)];
  return configuration(GOVERNANCE_WEBHOOK_CONFIGURATION, input, webhook);
}

function configuration(
  name: string,
  input: WebhookConfigurationInput,
  webhook: ValidatingWebhook,
): ValidatingWebhookConfiguration {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: {
      name,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
      ...(input.injectCaFrom === undefined
        ? {}
        : { annotations: { [INJECT_CA_ANNOTATION]: input.injectCaFrom } }),
      ...(input.owner === undefined ? {} : { ownerReferences: [ownerReference(input.owner)] }),
    },
    webhooks: [webhook],
  };
}

function clientConfig(input: WebhookConfigurationInput, path: string): WebhookClientConfig {
  const { endpoint, caBundlePem } = input;
  const caBundle = caBundlePem === undefined ? {} : { caBundle: Buffer.from(caBundlePem).toString('base64') };
  if (endpoint.kind === 'url') return { url: `${endpoint.url}${path}`, ...caBundle };
  const { namespace, name, port } = endpoint;
  return { service: { namespace, name, port, path }, ...caBundle };
}
