import { canonicalDigest } from './canonical-digest.js';
import { hasControlCharacter, type NoteSigningKey } from '../audit/note/note-keys.js';
import { signNote } from '../audit/note/signed-note.js';
import { ReceiptError } from './receipt-error.js';

/** The `params._meta` key a forwarded tools/call carries its receipt under. */
export const RECEIPT_META = 'dev.arbiter/receipt';

/** The first line of a receipt's text. */
export const RECEIPT_VERSION = 'arbiter-receipt/v1';

/** The lines after the version, in their order: `<field> <value>`. */
export const RECEIPT_FIELDS = ['decision', 'audit', 'actor', 'capability', 'arguments', 'issued'] as const;
export type ReceiptField = (typeof RECEIPT_FIELDS)[number];

/** What a receipt vouches for: the decision that allowed a forward, and the call forwarded. */
export interface ReceiptFacts {
  decision: string;
  /** The audit entry of that decision (its audit_ref). */
  audit: string;
  actor: string;
  capability: string;
  /** The arguments as forwarded to the upstream. */
  arguments: Record<string, unknown>;
  issued: Date;
}

/** `sha256:<hex>` of the RFC 8785 JSON of a call's arguments. */
export function argumentsDigest(args: Record<string, unknown>): string {
  return canonicalDigest(args);
}

/**
 * The receipt of one forwarded call: a C2SP signed note whose text is the version line
 * and one line per field, signed with the audit signing key.
 */
export function signReceipt(facts: ReceiptFacts, key: NoteSigningKey): string {
  const values: Record<ReceiptField, string> = {
    decision: facts.decision,
    audit: facts.audit,
    actor: facts.actor,
    capability: facts.capability,
    arguments: argumentsDigest(facts.arguments),
    issued: facts.issued.toISOString(),
  };
  const lines = RECEIPT_FIELDS.map((field) => {
    const value = values[field];
    // A value must stay on its line, or the text would say something else than was meant.
    if (value.length === 0 || value.includes('\n') || hasControlCharacter(value))
      throw new ReceiptError('receipt_malformed', `a receipt's ${field} must be one line of text`);
    return `${field} ${value}\n`;
  });
  return signNote(`${RECEIPT_VERSION}\n${lines.join('')}`, [key]);
}
