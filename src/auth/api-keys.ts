import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Ajv } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { ArbiterError } from '../model/index.js';
import { SCOPES, type Principal, type Scope } from './scopes.js';

/**
 * The API keys file of the CLI contract. Plaintext keys are for local development;
 * either way only their SHA-256 digests are kept in memory.
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
          name: { type: 'string', minLength: 1, maxLength: 128 },
          key: { type: 'string', minLength: 8, maxLength: 512 },
          sha256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
          scopes: { type: 'array', minItems: 1, items: { enum: [...SCOPES] } },
          actors: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 256 } },
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
}

const validateKeysFile = new Ajv({ allErrors: true }).compile<{ keys: KeyEntry[] }>(keysFileSchema);

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Looks principals up by the digest of the presented key. */
export class ApiKeyRegistry {
  private constructor(private readonly byDigest: ReadonlyMap<string, Principal>) {}

  static fromDocument(document: unknown, origin = 'API keys'): ApiKeyRegistry {
    if (!validateKeysFile(document)) {
      const problems = (validateKeysFile.errors ?? [])
        .map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`)
        .join('; ');
      throw new ArbiterError('INVALID_REQUEST', `${origin}: ${problems}`);
    }
    const byDigest = new Map<string, Principal>();
    const names = new Set<string>();
    for (const entry of document.keys) {
      if (names.has(entry.name))
        throw new ArbiterError('INVALID_REQUEST', `${origin}: duplicate key name ${entry.name}`);
      names.add(entry.name);
      const digest = (entry.sha256 ?? sha256Hex(entry.key ?? '')).toLowerCase();
      if (byDigest.has(digest))
        throw new ArbiterError('INVALID_REQUEST', `${origin}: key ${entry.name} is a duplicate`);
      byDigest.set(digest, {
        name: entry.name,
        scopes: new Set(entry.scopes),
        ...(entry.actors ? { actors: new Set(entry.actors) } : {}),
      });
    }
    return new ApiKeyRegistry(byDigest);
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
    return ApiKeyRegistry.fromDocument(parseYaml(text), path);
  }

  authenticate(presentedKey: string): Principal | undefined {
    return this.byDigest.get(sha256Hex(presentedKey));
  }

  get size(): number {
    return this.byDigest.size;
  }
}
