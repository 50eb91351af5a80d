import { validateConfigObject, type ValidationResult } from '../index/index.js';
import { objectKey, type ConfigObject, type Kind } from '../model/index.js';
import { rawKey, type RawObject } from './resources.js';

/** An object whose latest version fails the schema (the API server may not enforce all of it). */
export interface SchemaProblem {
  kind: Kind;
  name: string;
  namespace: string | undefined;
  generation: number | undefined;
  errors: string[];
  /** The generation still in use, when an earlier version of the same object was valid. */
  servingGeneration: number | undefined;
}

interface CachedCheck {
  /** uid and resourceVersion: the identity of one version of one object. */
  version: string;
  result: ValidationResult;
}

/** One update() in progress. */
interface Building {
  objects: ConfigObject[];
  problems: Map<string, SchemaProblem>;
  versions: Map<string, string>;
  good: Map<string, ConfigObject>;
  cache: Map<string, CachedCheck>;
}

export interface ValidatedSet {
  objects: ConfigObject[];
  problems: ReadonlyMap<string, SchemaProblem>;
  /** objectKey -> resourceVersion of every object seen, valid or not (read-your-writes). */
  versions: ReadonlyMap<string, string>;
}

/**
 * Turns what the informers hold into index input. An object whose new version fails
 * validation keeps its last valid version in the index (like a broken manifest file),
 * so a bad edit cannot silently drop, say, a DENY policy; its status says so.
 */
export class ValidatedObjects {
  private lastGood = new Map<string, ConfigObject>();
  /** Validation results by objectKey, reused while the resourceVersion is unchanged. */
  private checkedCache = new Map<string, CachedCheck>();

  update(rawByKind: ReadonlyMap<Kind, readonly RawObject[]>): ValidatedSet {
    const next: Building = {
      objects: [],
      problems: new Map(),
      versions: new Map(),
      good: new Map(),
      cache: new Map(),
    };
    for (const [kind, raws] of rawByKind) for (const raw of raws) this.add(kind, raw, next);
    this.lastGood = next.good;
    this.checkedCache = next.cache;
    return { objects: next.objects.sort(byKey), problems: next.problems, versions: next.versions };
  }

  private add(kind: Kind, raw: RawObject, next: Building): void {
    const { name = '', namespace, resourceVersion = '', uid, generation } = raw.metadata ?? {};
    const key = rawKey(kind, raw);
    next.versions.set(key, resourceVersion);
    const version = `${uid}/${resourceVersion}`;
    const checked = this.checkedOnce(key, resourceVersion === '' ? undefined : version, kind, raw);
    next.cache.set(key, { version, result: checked });
    const previous = this.lastGood.get(key);
    const kept = checked.ok ? checked.object : previous?.metadata.uid === uid ? previous : undefined;
    if (kept) {
      next.good.set(key, kept);
      next.objects.push(kept);
    }
    if (checked.ok) return;
    next.problems.set(key, {
      kind,
      name,
      namespace,
      generation,
      errors: checked.errors,
      servingGeneration: kept?.metadata.generation,
    });
  }

  /** Validates an object once per version: informers hand the same objects to every rebuild. */
  private checkedOnce(
    key: string,
    version: string | undefined,
    kind: Kind,
    raw: RawObject,
  ): ValidationResult {
    const cached = this.checkedCache.get(key);
    if (cached && version !== undefined && cached.version === version) return cached.result;
    return validateConfigObject(envelopeOf(kind, raw), { shareSpec: true });
  }
}

/** Only what the index reads: managedFields and status are large and irrelevant here. */
function envelopeOf(kind: Kind, raw: RawObject): Record<string, unknown> {
  const { name, namespace, uid, generation, resourceVersion, creationTimestamp, labels, annotations } =
    raw.metadata ?? {};
  return {
    apiVersion: raw.apiVersion,
    kind,
    metadata: { name, namespace, uid, generation, resourceVersion, creationTimestamp, labels, annotations },
    spec: raw.spec,
  };
}

function byKey(a: ConfigObject, b: ConfigObject): number {
  const [x, y] = [objectKey(a), objectKey(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}
