import { ArbiterError } from '../model/index.js';
import type { AuditEventInput } from './audit-log.js';
import { assertCanonicalisable } from './chain.js';

/**
 * Why no backend may store an event, if none may: a timestamp that does not parse, a
 * member named `hash` (the entry's own hash would be stored beside it, and the entry would
 * not verify), or a value JSON cannot hold. Checked before the event joins a batch, where
 * it would fail the others too.
 */
export function auditEventRefusal(event: AuditEventInput): ArbiterError | undefined {
  if (Number.isNaN(Date.parse(event.timestamp))) {
    return new ArbiterError(
      'INTERNAL',
      `audit event timestamp ${JSON.stringify(event.timestamp)} is not ISO 8601`,
    );
  }
  if ((event as { hash?: unknown }).hash !== undefined) {
    return new ArbiterError('INTERNAL', 'audit event has a member named hash, which only its entry may have');
  }
  try {
    assertCanonicalisable(event);
  } catch (err) {
    return new ArbiterError('INTERNAL', String(err));
  }
  return undefined;
}
