import { stringify } from 'yaml';
import { API_GROUP, isNamespacedKind, KINDS, SPEC_SCHEMAS, type Kind } from '../src/model/index.js';

/**
 * Builds the CustomResourceDefinitions in crds/ from the spec JSON Schemas of
 * src/model/spec-schemas.ts and tenancy-schemas.ts (the one source of truth) plus what only Kubernetes needs:
 * names, printer columns, the status schema, list types and CEL rules. `npm run gen:crds`
 * writes them; test/operator/crd-manifests.test.ts fails when the committed files drift.
 */

export const CRD_VERSION = 'v1alpha1';
export const CRD_CATEGORY = 'arbiter';

type Schema = Record<string, unknown>;

export interface CrdNames {
  kind: Kind;
  plural: string;
  singular: string;
  shortNames: string[];
}

export const CRD_NAMES: Record<Kind, CrdNames> = {
  Capability: { kind: 'Capability', plural: 'capabilities', singular: 'capability', shortNames: ['cap'] },
  Policy: { kind: 'Policy', plural: 'policies', singular: 'policy', shortNames: ['gpol'] },
  ActorGrant: { kind: 'ActorGrant', plural: 'actorgrants', singular: 'actorgrant', shortNames: ['agrant'] },
  Delegation: { kind: 'Delegation', plural: 'delegations', singular: 'delegation', shortNames: ['deleg'] },
  NamespacedPolicy: {
    kind: 'NamespacedPolicy',
    plural: 'namespacedpolicies',
    singular: 'namespacedpolicy',
    shortNames: ['nspol'],
  },
  NamespacedActorGrant: {
    kind: 'NamespacedActorGrant',
    plural: 'namespacedactorgrants',
    singular: 'namespacedactorgrant',
    shortNames: ['nsgrant'],
  },
};

interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

const READY = '.status.conditions[?(@.type=="Ready")]';
const readyColumns: PrinterColumn[] = [
  {
    name: 'Ready',
    type: 'string',
    jsonPath: `${READY}.status`,
    description: 'Whether the controller accepted the object.',
  },
  {
    name: 'Reason',
    type: 'string',
    jsonPath: `${READY}.reason`,
    priority: 1,
    description: 'Why it is (not) ready.',
  },
];
const ageColumn: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
const outsideColumn: PrinterColumn = {
  name: 'Outside',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="OutsideDelegation")].status',
  description: "True when it names capabilities its namespace's Delegation does not cover.",
};

const policyColumns: PrinterColumn[] = [
  { name: 'Enabled', type: 'boolean', jsonPath: '.spec.enabled' },
  {
    name: 'Enforcement',
    type: 'string',
    jsonPath: '.spec.enforcementAction',
    description: 'enforce, warn or audit (empty: enforce).',
  },
  // JSONPath cannot count; the controller writes the count into status.
  { name: 'Rules', type: 'integer', jsonPath: '.status.ruleCount', description: 'Number of rules.' },
  ...readyColumns,
];
const grantColumns: PrinterColumn[] = [
  { name: 'Actor', type: 'string', jsonPath: '.spec.actor.id' },
  { name: 'Type', type: 'string', jsonPath: '.spec.actor.type', priority: 1 },
  { name: 'Grants', type: 'integer', jsonPath: '.status.grantCount', description: 'Number of grants.' },
  ...readyColumns,
];
const description: PrinterColumn = {
  name: 'Description',
  type: 'string',
  jsonPath: '.spec.description',
  priority: 1,
};

const PRINTER_COLUMNS: Record<Kind, PrinterColumn[]> = {
  Capability: [
    // Not "Name": kubectl already prints the object name under that header.
    { name: 'Capability', type: 'string', jsonPath: '.spec.name', description: 'Dotted capability name.' },
    { name: 'Risk', type: 'string', jsonPath: '.spec.riskLevel' },
    ...readyColumns,
    ageColumn,
    description,
  ],
  Policy: [...policyColumns, ageColumn, description],
  ActorGrant: [...grantColumns, ageColumn],
  Delegation: [
    {
      name: 'Namespaces',
      type: 'string',
      jsonPath: '.spec.namespaces',
      description: 'The namespaces it covers.',
    },
    { name: 'Max Risk', type: 'string', jsonPath: '.spec.maxRiskLevel' },
    { name: 'Capabilities', type: 'string', jsonPath: '.spec.capabilities', priority: 1 },
    ...readyColumns,
    ageColumn,
  ],
  NamespacedPolicy: [...policyColumns, outsideColumn, ageColumn, description],
  NamespacedActorGrant: [...grantColumns, outsideColumn, ageColumn],
};

/** metav1.Condition, as controller-gen renders it. */
const conditionSchema: Schema = {
  type: 'object',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    type: {
      type: 'string',
      maxLength: 316,
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    lastTransitionTime: { type: 'string', format: 'date-time' },
    reason: {
      type: 'string',
      minLength: 1,
      maxLength: 1024,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
    },
    message: { type: 'string', maxLength: 32768 },
  },
};

const RULE_COUNT = { ruleCount: 'Number of rules in spec.rules (shown by kubectl get).' };
const GRANT_COUNT = { grantCount: 'Number of grants in spec.grants (shown by kubectl get).' };
const COUNT_FIELDS: Partial<Record<Kind, Record<string, string>>> = {
  Policy: RULE_COUNT,
  ActorGrant: GRANT_COUNT,
  NamespacedPolicy: RULE_COUNT,
  NamespacedActorGrant: GRANT_COUNT,
};

function statusSchema(kind: Kind): Schema {
  const counts = Object.fromEntries(
    Object.entries(COUNT_FIELDS[kind] ?? {}).map(([field, description]) => [
      field,
      { type: 'integer', minimum: 0, description },
    ]),
  );
  return {
    type: 'object',
    description: 'Written by the Arbiter controller.',
    properties: {
      observedGeneration: {
        type: 'integer',
        format: 'int64',
        minimum: 0,
        description: 'The metadata.generation the conditions describe.',
      },
      conditions: {
        type: 'array',
        maxItems: 8,
        items: conditionSchema,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
      },
      ...counts,
    },
  };
}

/**
 * Structural schemas forbid `additionalProperties` next to `properties`; unknown fields
 * are pruned by the API server instead, which is what `additionalProperties: false` means
 * to ajv. A schema-valued additionalProperties (a map) is kept.
 */
export function toStructural(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toStructural);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'additionalProperties' && typeof value === 'boolean') continue;
    out[key] = key === 'enum' || key === 'required' ? [...(value as unknown[])] : toStructural(value);
  }
  return out;
}

interface CelRule {
  rule: string;
  message: string;
}

/** An identity field that may not change once set: rename = delete and recreate. */
function immutable(field: string, why: string): CelRule {
  return { rule: `self.${field} == oldSelf.${field}`, message: `spec.${field} is immutable: ${why}` };
}

/**
 * Kubernetes-only additions to the structural copy of a kind's spec schema. CEL rules must
 * stay cheap: the API server refuses a CRD whose estimated rule cost is too high, and an
 * O(n²) rule over 1,024 grants would be (hence the list-map keys for uniqueness).
 */
function addKubernetesRules(kind: Kind, spec: Schema): Schema {
  const properties = spec.properties as Record<string, Schema>;
  switch (kind) {
    case 'Capability':
      return {
        ...spec,
        'x-kubernetes-validations': [
          immutable('name', 'grants and policies refer to it; create a new Capability to rename'),
        ],
      };
    case 'ActorGrant':
    case 'NamespacedActorGrant':
      // One entry per capability (the API server rejects duplicates), and server-side
      // apply merges grants by capability: POST/DELETE /actors/:id/grants patch one entry.
      properties.grants = {
        ...properties.grants,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['capability'],
      };
      // A namespaced grant's subjects default to its namespace; the webhook and the index
      // refuse foreign ones (CEL here cannot see the object's namespace).
      if (kind === 'ActorGrant') properties.actor = withSubjectRule(properties.actor!);
      return {
        ...spec,
        'x-kubernetes-validations': [
          immutable('actor.id', `to grant another actor, create an ${kind} for it`),
        ],
      };
    case 'Policy':
    case 'NamespacedPolicy':
    case 'Delegation':
      return spec;
  }
}

/** A ServiceAccount subject names its namespace, a User none (the controller checks it too). */
function withSubjectRule(actor: Schema): Schema {
  const properties = actor.properties as Record<string, Schema>;
  const subjects = properties.subjects!;
  const items: Schema = {
    ...(subjects.items as Schema),
    'x-kubernetes-validations': [
      {
        rule: "self.kind == 'ServiceAccount' ? has(self.__namespace__) : !has(self.__namespace__)",
        message: 'a ServiceAccount subject needs its namespace; a User subject has none',
      },
    ],
  };
  return { ...actor, properties: { ...properties, subjects: { ...subjects, items } } };
}

/** The Kubernetes-only keys added to the spec schemas; everything else is the source schema. */
export const KUBERNETES_ONLY_KEYS = [
  'x-kubernetes-validations',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
] as const;

export function specSchemaFor(kind: Kind): Schema {
  return addKubernetesRules(kind, toStructural(SPEC_SCHEMAS[kind]) as Schema);
}

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string> };
  spec: Schema;
}

export function buildCrd(kind: Kind): CustomResourceDefinition {
  const names = CRD_NAMES[kind];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${names.plural}.${API_GROUP}`,
      labels: { 'app.kubernetes.io/name': 'arbiter', 'app.kubernetes.io/component': 'crd' },
    },
    spec: {
      group: API_GROUP,
      scope: isNamespacedKind(kind) ? 'Namespaced' : 'Cluster',
      names: {
        kind,
        listKind: `${kind}List`,
        plural: names.plural,
        singular: names.singular,
        shortNames: names.shortNames,
        categories: [CRD_CATEGORY],
      },
      versions: [
        {
          name: CRD_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: PRINTER_COLUMNS[kind],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: `An Arbiter ${kind} (see the README and docs/ for its meaning).`,
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: specSchemaFor(kind),
                status: statusSchema(kind),
              },
            },
          },
        },
      ],
    },
  };
}

export function crdFileName(kind: Kind): string {
  return `${API_GROUP}_${CRD_NAMES[kind].plural}.yaml`;
}

const HEADER =
  '# Generated by scripts/gen-crds.ts from src/model/spec-schemas.ts and tenancy-schemas.ts. Do not edit by hand:\n' +
  '# change the schema, then run `npm run gen:crds` (a test fails when this file drifts).\n';

/** The files of crds/, by file name. */
export function renderCrdFiles(): Map<string, string> {
  return new Map(
    KINDS.map((kind) => [crdFileName(kind), HEADER + stringify(buildCrd(kind), { lineWidth: 0 })]),
  );
}

/** A deep copy without the given keys, at any depth. */
export function withoutKeys<T>(value: T, keys: readonly string[]): T {
  if (Array.isArray(value)) return value.map((item: unknown) => withoutKeys(item, keys)) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !keys.includes(key))
      .map(([key, child]) => [key, withoutKeys(child, keys)]),
  ) as T;
}

/** Removes every `x-kubernetes-validations` (CEL rules), for API servers older than 1.25. */
export function withoutCelRules<T>(value: T): T {
  return withoutKeys(value, ['x-kubernetes-validations']);
}

/**
 * CEL validation rules are enabled by default from Kubernetes 1.25 (beta; GA in 1.29).
 * Older servers do not know the field: see docs/testing.md for how each installer copes.
 */
export function supportsCelRules(version: { major: number; minor: number }): boolean {
  return version.major > 1 || (version.major === 1 && version.minor >= 25);
}
