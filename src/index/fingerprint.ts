import { createHash } from 'node:crypto';
import { canonicalJson } from '../audit/chain.js';

// Informers and stores hand the same spec objects again and again: hash each once.
const known = new WeakMap<object, string>();

/**
 * Equal for specs with equal content whatever their key order; used to reuse compiled
 * artefacts. A digest, not the canonical text: one is kept per object in the index.
 */
export function specFingerprint(spec: object): string {
  const cached = known.get(spec);
  if (cached !== undefined) return cached;
  const fingerprint = createHash('sha256').update(canonicalJson(spec)).digest('base64');
  known.set(spec, fingerprint);
  return fingerprint;
}
