import canonicalizeModule from 'canonicalize';

// The package is CommonJS with ESM-style typings: at run time the default import is the function itself.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

// Informers and stores hand the same spec objects again and again: hash each once.
const known = new WeakMap<object, string>();

/** Equal for specs with equal content whatever their key order; used to reuse compiled artefacts. */
export function specFingerprint(spec: object): string {
  const cached = known.get(spec);
  if (cached !== undefined) return cached;
  const fingerprint = canonicalize(spec) ?? '';
  known.set(spec, fingerprint);
  return fingerprint;
}
