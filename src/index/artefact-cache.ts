import { specFingerprint } from './fingerprint.js';

interface Entry {
  fingerprint: string;
  value: unknown;
  release?: () => void;
}

/**
 * Compiled artefacts of one snapshot by `Kind/name`. Building the next snapshot reuses an
 * entry when the fingerprints of what it was compiled from (the object's spec, and for a
 * policy its capabilities' parameter schemas) are unchanged, and compiles only the rest.
 * Specs are treated as immutable once indexed (sources replace objects, never edit them).
 */
export class ArtefactCache {
  private readonly entries = new Map<string, Entry>();
  private readonly previous: ReadonlyMap<string, Entry>;
  /** How many artefacts this build compiled (the rest were reused); for tests and metrics. */
  compiled = 0;

  constructor(previous?: ArtefactCache) {
    this.previous = previous?.entries ?? new Map();
  }

  get<T>(key: string, inputs: object | readonly object[], compile: () => T, release?: (value: T) => void): T {
    // Each input is hashed once (specFingerprint caches by object): only the digests are joined.
    const fingerprint = Array.isArray(inputs)
      ? inputs.map(specFingerprint).join(' ')
      : specFingerprint(inputs);
    const old = this.previous.get(key);
    const entry: Entry = old?.fingerprint === fingerprint ? old : this.fresh(fingerprint, compile(), release);
    this.entries.set(key, entry);
    return entry.value as T;
  }

  /** Frees what the previous snapshot compiled and this one no longer uses. */
  releaseUnused(): void {
    for (const [key, entry] of this.previous) if (this.entries.get(key) !== entry) entry.release?.();
  }

  /** Frees what this build compiled itself: a trial build whose snapshot is thrown away. */
  releaseFresh(): void {
    for (const [key, entry] of this.entries) if (this.previous.get(key) !== entry) entry.release?.();
  }

  private fresh<T>(fingerprint: string, value: T, release?: (value: T) => void): Entry {
    this.compiled += 1;
    return { fingerprint, value, ...(release ? { release: () => release(value) } : {}) };
  }
}
