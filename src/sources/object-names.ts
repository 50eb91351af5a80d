import { createHash } from 'node:crypto';

/**
 * Object names for objects created through the API. Capability names may hold
 * underscores, which object names forbid, so names are slugs plus a short digest
 * that keeps them unique.
 */
function slug(text: string, max: number): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, max)
      .replace(/-+$/g, '') || 'x'
  );
}

function digest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 8);
}

export function capabilityObjectName(capability: string): string {
  return `${slug(capability, 100)}-${digest(capability)}`;
}

export function grantObjectName(actorId: string, capability: string): string {
  return `${slug(actorId, 60)}-${slug(capability, 60)}-${digest(`${actorId}\u0000${capability}`)}`;
}

/** A stable uid for an object that has none (manifests): derived from its objectKey. */
export function derivedUid(key: string): string {
  const hex = createHash('sha256').update(key, 'utf8').digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
