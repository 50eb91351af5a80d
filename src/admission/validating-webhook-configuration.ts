/**
 * The admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration fields Arbiter sets,
 * as plain JSON (the builders stay free of @kubernetes/client-node).
 */

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface RuleWithOperations {
  apiGroups: string[];
  apiVersions: string[];
  operations: Operation[];
  /** Plural names, subresources as `pods/exec`. */
  resources: string[];
  scope: 'Cluster' | 'Namespaced' | '*';
}

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; port: number; path: string };
  /** Base64 of the PEM bundle the API server trusts for this webhook. */
  caBundle?: string;
}

export interface MatchCondition {
  name: string;
  expression: string;
}

export interface ValidatingWebhook {
  name: string;
  clientConfig: WebhookClientConfig;
  rules: RuleWithOperations[];
  failurePolicy: 'Fail' | 'Ignore';
  matchPolicy: 'Exact' | 'Equivalent';
  namespaceSelector: LabelSelector;
  objectSelector: LabelSelector;
  sideEffects: 'None' | 'NoneOnDryRun';
  timeoutSeconds: number;
  admissionReviewVersions: string[];
  /** API servers >= 1.28 only. */
  matchConditions?: MatchCondition[];
}

export interface ObjectMeta {
  name: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [field: string]: unknown;
}

export interface ValidatingWebhookConfiguration {
  apiVersion: 'admissionregistration.k8s.io/v1';
  kind: 'ValidatingWebhookConfiguration';
  metadata: ObjectMeta;
  webhooks: ValidatingWebhook[];
}

/** The webhook fields Arbiter owns: compared with the live object, everything else is the server's. */
export const OWNED_WEBHOOK_FIELDS = [
  'name',
  'clientConfig',
  'rules',
  'failurePolicy',
  'matchPolicy',
  'namespaceSelector',
  'objectSelector',
  'sideEffects',
  'timeoutSeconds',
  'admissionReviewVersions',
  'matchConditions',
] as const satisfies readonly (keyof ValidatingWebhook)[];
