import { parseNamespacedActorId } from '../model/index.js';
import type { AuditEventInput } from './audit-log.js';

/**
 * The namespace an entry belongs to: its actor's, for a namespaced actor (`team-a/bot`);
 * null for cluster actors and entries without an actor. Read from the actor id, never
 * stored, so the chain's entries keep their shape and older logs answer alike.
 */
export function entryNamespace(entry: Pick<AuditEventInput, 'actor_id'>): string | null {
  return entry.actor_id === null ? null : (parseNamespacedActorId(entry.actor_id)?.namespace ?? null);
}
