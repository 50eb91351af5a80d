import { Ajv, type ValidateFunction } from 'ajv';
import {
  API_VERSION,
  isNamespacedKind,
  KINDS,
  NAMESPACE_NAME_MAX_LENGTH,
  NAMESPACE_NAME_PATTERN,
  SPEC_SCHEMAS,
  type ActorGrantSpec,
  type ConfigObject,
  type Kind,
  type ObjectMeta,
} from '../model/index.js';
import { ajvErrorText } from './ajv-error-text.js';
import { findForbiddenKey } from './forbidden-keys.js';

export type ValidationResult = { ok: true; object: ConfigObject } | { ok: false; errors: string[] };

/** Kubernetes object names (DNS-1123 subdomain). */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_SUBDOMAIN_MAX_LENGTH = 253;
const NAMESPACE_NAME = new RegExp(NAMESPACE_NAME_PATTERN);

const metadataSchema = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string' },
    namespace: { type: 'string' },
    uid: { type: 'string' },
    generation: { type: 'integer' },
    resourceVersion: { type: 'string' },
    creationTimestamp: { type: 'string' },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    annotations: { type: 'object', additionalProperties: { type: 'string' } },
  },
} as const;

// Compiled once at module load; the CRD-only keyword is known but has no effect here.
const ajv = new Ajv({
  allErrors: true,
  // Stryker disable next-line BooleanLiteral: strict mode checks our own schemas as they compile; they pass it.
  strict: true,
  logger: false,
});
ajv.addKeyword({ keyword: 'x-kubernetes-preserve-unknown-fields', schemaType: 'boolean' });
const validateMetadata = ajv.compile(metadataSchema);
const validateSpec = Object.fromEntries(
  KINDS.map((kind) => [kind, ajv.compile(SPEC_SCHEMAS[kind])]),
) as Record<Kind, ValidateFunction>;

/**
 * Checks a raw (parsed YAML/JSON or informer) object against the kinds' schemas and
 * returns a normalised deep copy: only the known metadata fields, no status.
 * `shareSpec` skips copying the spec, for callers whose raw objects are replaced, never
 * edited (an informer's cache): one copy of each spec instead of two.
 */
export function validateConfigObject(raw: unknown, { shareSpec = false } = {}): ValidationResult {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    return { ok: false, errors: ['object: must be a mapping'] };
  const forbidden = findForbiddenKey(raw, 'object');
  if (forbidden) return { ok: false, errors: [`${forbidden}: this key is not allowed`] };
  const input = withIsoTimestamp(raw as Record<string, unknown>);
  const errors = [...envelopeErrors(input), ...metadataErrors(input.metadata)];
  if (isKind(input.kind))
    errors.push(...scopeErrors(input.kind, input.metadata), ...specErrors(input.kind, input.spec));
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, object: normalise(input, shareSpec) };
}

/** @kubernetes/client-node deserialises creationTimestamp to a Date. */
function withIsoTimestamp(input: Record<string, unknown>): Record<string, unknown> {
  const metadata = input.metadata as Record<string, unknown> | undefined;
  if (!(metadata?.creationTimestamp instanceof Date)) return input;
  return { ...input, metadata: { ...metadata, creationTimestamp: metadata.creationTimestamp.toISOString() } };
}

function envelopeErrors(input: Record<string, unknown>): string[] {
  const errors: string[] = [];
  if (input.apiVersion !== API_VERSION)
    errors.push(`apiVersion: must be ${API_VERSION}, got ${JSON.stringify(input.apiVersion) ?? 'nothing'}`);
  if (!isKind(input.kind))
    errors.push(`kind: must be one of ${KINDS.join(', ')}, got ${JSON.stringify(input.kind) ?? 'nothing'}`);
  return errors;
}

function metadataErrors(metadata: unknown): string[] {
  if (!validateMetadata(metadata))
    return (validateMetadata.errors ?? []).map((e) => ajvErrorText(e, 'metadata'));
  const name = (metadata as ObjectMeta).name;
  if (name.length > DNS_SUBDOMAIN_MAX_LENGTH || !DNS_SUBDOMAIN.test(name))
    return [
      `metadata.name: ${JSON.stringify(name)} is not a valid object name (lower case letters, digits, '-' and '.', ` +
        `starting and ending with a letter or digit, at most ${DNS_SUBDOMAIN_MAX_LENGTH} characters)`,
    ];
  return [];
}

/** The namespaced kinds live in a namespace; the cluster kinds in none. */
function scopeErrors(kind: Kind, metadata: unknown): string[] {
  const namespace = (metadata as ObjectMeta | undefined)?.namespace;
  if (!isNamespacedKind(kind))
    return namespace === undefined
      ? []
      : [`metadata.namespace: a ${kind} is cluster-scoped and has no namespace`];
  if (namespace === undefined) return [`metadata.namespace: a ${kind} needs the namespace it belongs to`];
  if (typeof namespace !== 'string') return []; // the metadata schema reports it
  if (namespace.length > NAMESPACE_NAME_MAX_LENGTH || !NAMESPACE_NAME.test(namespace))
    return [
      `metadata.namespace: ${JSON.stringify(namespace)} is not a namespace name (lower case letters, digits and '-', ` +
        `starting and ending with a letter or digit, at most ${NAMESPACE_NAME_MAX_LENGTH} characters)`,
    ];
  return [];
}

function specErrors(kind: Kind, spec: unknown): string[] {
  const validate = validateSpec[kind];
  if (!validate(spec)) return (validate.errors ?? []).map((e) => ajvErrorText(e, 'spec'));
  if (kind === 'NamespacedActorGrant') return duplicateGrantErrors(spec as ActorGrantSpec);
  if (kind !== 'ActorGrant') return [];
  const grantSpec = spec as ActorGrantSpec;
  return [...duplicateGrantErrors(grantSpec), ...subjectErrors(grantSpec)];
}

/** RBAC's rule, which the schema alone cannot say: a ServiceAccount has a namespace, a User none. */
function subjectErrors(spec: ActorGrantSpec): string[] {
  const errors: string[] = [];
  for (const [index, subject] of (spec.actor.subjects ?? []).entries()) {
    const path = `spec.actor.subjects[${index}]`;
    if (subject.kind === 'ServiceAccount' && subject.namespace === undefined)
      errors.push(`${path}.namespace: a ServiceAccount subject needs its namespace`);
    if (subject.kind === 'User' && subject.namespace !== undefined)
      errors.push(`${path}.namespace: a User subject has no namespace`);
  }
  return errors;
}

/** The CRD lists grants as a map keyed by capability; JSON Schema cannot say so, so check here. */
function duplicateGrantErrors(spec: ActorGrantSpec): string[] {
  const seen = new Set<string>();
  const errors: string[] = [];
  for (const [index, grant] of spec.grants.entries()) {
    if (seen.has(grant.capability))
      errors.push(
        `spec.grants[${index}].capability: ${grant.capability} is granted more than once in this object`,
      );
    seen.add(grant.capability);
  }
  return errors;
}

function isKind(value: unknown): value is Kind {
  return typeof value === 'string' && (KINDS as readonly string[]).includes(value);
}

const META_FIELDS = [
  'name',
  'namespace',
  'uid',
  'generation',
  'resourceVersion',
  'creationTimestamp',
  'labels',
  'annotations',
] as const;

function normalise(input: Record<string, unknown>, shareSpec: boolean): ConfigObject {
  const meta = input.metadata as Record<string, unknown>;
  const metadata: Record<string, unknown> = {};
  for (const field of META_FIELDS) if (meta[field] !== undefined) metadata[field] = meta[field];
  return {
    apiVersion: API_VERSION,
    kind: input.kind,
    metadata: structuredClone(metadata),
    spec: shareSpec ? input.spec : structuredClone(input.spec),
  } as unknown as ConfigObject;
}
