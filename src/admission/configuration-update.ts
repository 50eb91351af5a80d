import { isDeepStrictEqual } from 'node:util';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from './admission-settings.js';
import {
  OWNED_WEBHOOK_FIELDS,
  type ObjectMeta,
  type ValidatingWebhook,
  type ValidatingWebhookConfiguration,
} from './validating-webhook-configuration.js';
import { INJECT_CA_ANNOTATION } from './webhook-configurations.js';

/** Annotations Arbiter sets or removes; the others belong to whoever put them there. */
const OWNED_ANNOTATIONS = [INJECT_CA_ANNOTATION];

/** The live configuration as the API server returned it (defaults filled in, extra fields). */
export interface LiveConfiguration {
  /** The rest of the metadata (uid, finalizers, ...) is kept as it is. */
  metadata?: {
    name?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: readonly unknown[];
  };
  webhooks?: readonly unknown[];
}

/** Arbiter touches only configurations carrying its label (never an admin's own). */
export function isManagedByArbiter(live: LiveConfiguration): boolean {
  return live.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE;
}

/**
 * The replacement to write so that `live` becomes `desired`, or undefined when the fields
 * Arbiter owns already match. A caBundle that `desired` leaves open keeps its live value
 * (cert-manager's cainjector fills it in); other labels, annotations and metadata stay.
 * The replacement carries the live resourceVersion, so a concurrent change makes it CONFLICT.
 */
export function configurationUpdate(
  desired: ValidatingWebhookConfiguration,
  live: LiveConfiguration,
): ValidatingWebhookConfiguration | undefined {
  const webhooks = desired.webhooks.map((webhook) => withLiveCaBundle(webhook, live));
  const metadata = mergedMetadata(desired.metadata, live.metadata ?? {});
  const unchanged =
    isDeepStrictEqual(ownedFields(webhooks), ownedFields(live.webhooks ?? [])) &&
    isDeepStrictEqual(ownedMetadata(metadata), ownedMetadata(live.metadata ?? {}));
  return unchanged ? undefined : { ...desired, metadata, webhooks };
}

function withLiveCaBundle(webhook: ValidatingWebhook, live: LiveConfiguration): ValidatingWebhook {
  if (webhook.clientConfig.caBundle !== undefined) return webhook;
  const caBundle = liveWebhook(live, webhook.name)?.clientConfig?.caBundle;
  if (typeof caBundle !== 'string') return webhook;
  return { ...webhook, clientConfig: { ...webhook.clientConfig, caBundle } };
}

function liveWebhook(
  live: LiveConfiguration,
  name: string,
): { clientConfig?: { caBundle?: unknown } } | undefined {
  // Stryker disable next-line ArrayDeclaration: a string in the fallback list has no name, so nothing is found either way
  return (live.webhooks ?? []).find(
    (webhook): webhook is { name: string; clientConfig?: { caBundle?: unknown } } =>
      (webhook as { name?: unknown } | null)?.name === name,
  );
}

type LiveMetadata = NonNullable<LiveConfiguration['metadata']>;

function mergedMetadata(desired: ObjectMeta, live: LiveMetadata): ObjectMeta {
  const annotations = { ...live.annotations };
  for (const key of OWNED_ANNOTATIONS) delete annotations[key];
  Object.assign(annotations, desired.annotations);
  // Left out, the API server keeps its managedFields as they are.
  const kept: Record<string, unknown> = { ...live };
  delete kept.managedFields;
  return {
    ...kept,
    name: desired.name,
    labels: { ...live.labels, ...desired.labels },
    annotations: Object.keys(annotations).length > 0 ? annotations : undefined,
    // Ours when we name an owner; left as they are when we do not (Arbiter never removes one).
    ...(desired.ownerReferences === undefined ? {} : { ownerReferences: desired.ownerReferences }),
  };
}

function ownedMetadata(metadata: LiveMetadata): unknown {
  const annotations = metadata.annotations ?? {};
  return plain({
    managedBy: metadata.labels?.[MANAGED_BY_LABEL],
    annotations: OWNED_ANNOTATIONS.map((key) => annotations[key] ?? null),
    owners: (metadata.ownerReferences ?? []).map((reference) => {
      const { kind, name, uid } = reference as { kind?: string; name?: string; uid?: string };
      return { kind, name, uid };
    }),
  });
}

/** The owned fields only, as plain JSON: server defaults elsewhere and class instances compare equal. */
function ownedFields(webhooks: readonly unknown[]): unknown {
  return plain(
    webhooks.map((webhook) =>
      Object.fromEntries(
        OWNED_WEBHOOK_FIELDS.map((field) => [field, (webhook as Record<string, unknown>)[field]]),
      ),
    ),
  );
}

function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}
