import { hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Ajv } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { ArbiterError } from '../model/index.js';
import { NAMESPACE_NAME_MAX_LENGTH, NAMESPACE_NAME_PATTERN } from '../model/namespaced-actor-id.js';
import { errorText } from '../model/error-text.js';
import { SCOPES, type Principal, type Scope } from './scopes.js';

/** A Kubernetes namespace or ServiceAccount name (RFC 1123 subdomain, as the API server checks). */
const K8S_NAME = {
  type: 'string',
  minLength: 1,
  maxLength: 253,
  pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
} as const;

const SCOPES_SCHEMA = { type: 'array', minItems: 1, items: { enum: [...SCOPES] } } as const;
const ACTORS_SCHEMA = {
  type: 'array',
  items: { type: 'string', minLength: 1, maxLength: 256 },
} as const;
/** Limits a key to the records and objects of these namespaces (issue #38). */
const NAMESPACES_SCHEMA = {
  type: 'array',
  minItems: 1,
  items: { type: 'string', maxLength: NAMESPACE_NAME_MAX_LENGTH, pattern: NAMESPACE_NAME_PATTERN },
} as const;

/** Principal names of ServiceAccounts start with this; API key names may not. */
export const SERVICE_ACCOUNT_PREFIX = 'serviceaccount:';
/**
 * Principal names of other Kubernetes users start with this; API key names may not. The
 * admission webhook records the proposer of its decisions the same way
 * (`kubernetes:<username>`, governance/kubernetes-request-decisions.ts).
 */
export const KUBERNETES_PRINCIPAL_PREFIX = 'kubernetes:';

/**
 * The API keys file of the CLI contract. Plaintext keys are for local development;
 * either way only their SHA-256 digests are kept in memory. `serviceAccounts` lists the
 * pods that may present their ServiceAccount token instead (cluster mode only).
 */
const keysFileSchema = {
  type: 'object',
  required: ['keys'],
  additionalProperties: false,
  properties: {
    keys: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'scopes'],
        additionalProperties: false,
        oneOf: [{ required: ['key'] }, { required: ['sha256'] }],
        properties: {
          name: {
            type: 'string',
            minLength: 1,
            maxLength: 128,
            not: { pattern: `^(${SERVICE_ACCOUNT_PREFIX}|${KUBERNETES_PRINCIPAL_PREFIX})` },
          },
          key: { type: 'string', minLength: 8, maxLength: 512 },
          sha256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
          scopes: SCOPES_SCHEMA,
          actors: ACTORS_SCHEMA,
          namespaces: NAMESPACES_SCHEMA,
        },
      },
    },
    serviceAccounts: {
      type: 'array',
      items: {
        type: 'object',
        required: ['namespace', 'name', 'scopes'],
        additionalProperties: false,
        properties: {
          namespace: K8S_NAME,
          name: K8S_NAME,
          scopes: SCOPES_SCHEMA,
          actors: ACTORS_SCHEMA,
          namespaces: NAMESPACES_SCHEMA,
        },
      },
    },
  },
} as const;

interface KeyEntry {
  name: string;
  key?: string;
  sha256?: string;
  scopes: Scope[];
  actors?: string[];
  namespaces?: string[];
}

interface ServiceAccountEntry {
  namespace: string;
  name: string;
  scopes: Scope[];
  actors?: string[];
  namespaces?: string[];
}

interface KeysFile {
  keys: KeyEntry[];
  serviceAccounts?: ServiceAccountEntry[];
}

const validateKeysFile = new Ajv({ allErrors: true }).compile<KeysFile>(keysFileSchema);

/** `namespace/name`, the key of a ServiceAccount in ApiKeyRegistry.serviceAccounts. */
export function serviceAccountKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

function principal(
  name: string,
  entry: { scopes: Scope[]; actors?: string[]; namespaces?: string[] },
): Principal {
  return {
    name,
    scopes: new Set(entry.scopes),
    ...(entry.actors ? { actors: new Set(entry.actors) } : {}),
    ...(entry.namespaces ? { namespaces: new Set(entry.namespaces) } : {}),
  };
}

function serviceAccountPrincipals(
  entries: readonly ServiceAccountEntry[],
  origin: string,
): ReadonlyMap<string, Principal> {
  const byAccount = new Map<string, Principal>();
  for (const entry of entries) {
    const key = serviceAccountKey(entry.namespace, entry.name);
    if (byAccount.has(key))
      throw new ArbiterError('INVALID_REQUEST', `${origin}: ServiceAccount ${key} is listed twice`);
    byAccount.set(key, principal(`${SERVICE_ACCOUNT_PREFIX}${key}`, entry));
  }
  return byAccount;
}

export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/** Looks principals up by the digest of the presented key. */
export class ApiKeyRegistry {
  private constructor(
    private readonly byDigest: ReadonlyMap<string, Principal>,
    /** The ServiceAccounts of the file by `namespace/name`, with their principals. */
    readonly serviceAccounts: ReadonlyMap<string, Principal>,
  ) {}

  static fromDocument(document: unknown, origin = 'API keys'): ApiKeyRegistry {
    if (!validateKeysFile(document)) {
      const problems = (validateKeysFile.errors ?? [])
        .map((e) => {
          // Stryker disable next-line StringLiteral: ajv gives every error a message (messages: true is its default); the fallback is for the type.
          const message = e.message ?? 'is invalid';
          return `${e.instancePath || '/'} ${message}`;
        })
        .join('; ');
      throw new ArbiterError('INVALID_REQUEST', `${origin}: ${problems}`);
    }
    const byDigest = new Map<string, Principal>();
    const names = new Set<string>();
    for (const entry of document.keys) {
      if (names.has(entry.name))
        throw new ArbiterError('INVALID_REQUEST', `${origin}: duplicate key name ${entry.name}`);
      names.add(entry.name);
      const digest = (entry.sha256 ?? sha256Hex(entry.key!)).toLowerCase(); // the schema: key or sha256
      if (byDigest.has(digest))
        throw new ArbiterError('INVALID_REQUEST', `${origin}: key ${entry.name} is a duplicate`);
      byDigest.set(digest, principal(entry.name, entry));
    }
    return new ApiKeyRegistry(byDigest, serviceAccountPrincipals(document.serviceAccounts ?? [], origin));
  }

  static async load(path: string): Promise<ApiKeyRegistry> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      throw new ArbiterError('INVALID_REQUEST', `cannot read API keys file ${path}`, undefined, {
        cause: err,
      });
    }
    let document: unknown;
    try {
      document = parseYaml(text);
    } catch (err) {
      throw new ArbiterError('INVALID_REQUEST', `API keys file ${path}: ${errorText(err)}`, undefined, {
        cause: err,
      });
    }
    return ApiKeyRegistry.fromDocument(document, path);
  }

  authenticate(presentedKey: string): Principal | undefined {
    return this.byDigest.get(sha256Hex(presentedKey));
  }

  get size(): number {
    return this.byDigest.size;
  }
}
