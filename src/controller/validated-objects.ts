import { validateConfigObject, type ValidationResult } from '../index/index.js';
import { objectKey, type ConfigObject, type Kind } from '../model/index.js';
import type { RawObject } from './resources.js';

/** An object whose latest version fails the schema (the API server may not enforce all of it). */
export interface SchemaProblem {
  kind: Kind;
  name: string;
  generation: number | undefined;
  errors: string[];
  /** The generation still in use, when an earlier version of the same object was valid. */
  servingGeneration: number | undefined;
}

export interface ValidatedSet {
  objects: ConfigObject[];
  problems: ReadonlyMap<string, SchemaProblem>;
  /** kind/name -> resourceVersion of every object seen, valid or not (read-your-writes). */
  versions: ReadonlyMap<string, string>;
}

/**
 * Turns what the informers hold into index input. An object whose new version fails
 * validation keeps its last valid version in the index (like a broken manifest file),
 * so a bad edit cannot silently drop, say, a DENY policy; its status says so.
 */
export class ValidatedObjects {
  private lastGood = new Map<string, ConfigObject>();
  /** Validation results by kind/name, reused while the resourceVersion is unchanged. */
  private checkedCache = new Map<string, { resourceVersion: string; result: ValidationResult }>();

  update(rawByKind: ReadonlyMap<Kind, readonly RawObject[]>): ValidatedSet {
    const nextGood = new Map<string, ConfigObject>();
    const objects: ConfigObject[] = [];
    const problems = new Map<string, SchemaProblem>();
    const versions = new Map<string, string>();
    const nextCache = new Map<string, { resourceVersion: string; result: ValidationResult }>();
    for (const [kind, raws] of rawByKind) {
      for (const raw of raws) {
        const name = raw.metadata?.name ?? '';
        const key = `${kind}/${name}`;
        const resourceVersion = raw.metadata?.resourceVersion ?? '';
        versions.set(key, resourceVersion);
        const cached = this.checkedCache.get(key);
        const checked =
          cached && resourceVersion !== '' && cached.resourceVersion === resourceVersion
            ? cached.result
            : validateConfigObject(envelopeOf(kind, raw));
        nextCache.set(key, { resourceVersion, result: checked });
        const previous = this.lastGood.get(key);
        if (checked.ok) {
          nextGood.set(key, checked.object);
          objects.push(checked.object);
          continue;
        }
        const kept = previous && previous.metadata.uid === raw.metadata?.uid ? previous : undefined;
        if (kept) {
          nextGood.set(key, kept);
          objects.push(kept);
        }
        problems.set(key, {
          kind,
          name,
          generation: raw.metadata?.generation,
          errors: checked.errors,
          servingGeneration: kept?.metadata.generation,
        });
      }
    }
    this.lastGood = nextGood;
    this.checkedCache = nextCache;
    return { objects: objects.sort(byKey), problems, versions };
  }
}

/** Only what the index reads: managedFields and status are large and irrelevant here. */
function envelopeOf(kind: Kind, raw: RawObject): Record<string, unknown> {
  const { name, uid, generation, resourceVersion, creationTimestamp, labels, annotations } =
    raw.metadata ?? {};
  return {
    apiVersion: raw.apiVersion,
    kind,
    metadata: { name, uid, generation, resourceVersion, creationTimestamp, labels, annotations },
    spec: raw.spec,
  };
}

function byKey(a: ConfigObject, b: ConfigObject): number {
  const [x, y] = [objectKey(a), objectKey(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}
