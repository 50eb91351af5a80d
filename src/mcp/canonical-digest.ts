import { hash } from 'node:crypto';
import { withCanonicalBytes } from '../audit/canonical-writer.js';

/**
 * "sha256:" and the hex SHA-256 of a value's RFC 8785 JSON: how a pin names a tool's
 * definition and a receipt names a call's arguments, so an upstream can recompute either.
 */
export function canonicalDigest(value: unknown): string {
  return `sha256:${withCanonicalBytes(value, (bytes) => hash('sha256', bytes, 'hex'))}`;
}
