import { NoteError } from './note-error.js';
import { SIGNATURE_TYPE, type SignatureType } from './note-keys.js';

/**
 * Whom a verifier key speaks for, read from its signature type: a log signs its own
 * checkpoints (Ed25519, 0x01); a witness cosigns checkpoints it saw extend the last one
 * it cosigned (cosignature/v1, 0x04). A cosignature never says that the log signed.
 */
export type KeyRole = 'log' | 'witness';

/** How messages name a key of each role. */
export const ROLE_KEY: Record<KeyRole, string> = {
  log: 'a log key (type 0x01)',
  witness: 'a witness key (type 0x04)',
};

export function roleOf(key: { readonly type: SignatureType }): KeyRole {
  return key.type === SIGNATURE_TYPE.cosignatureV1 ? 'witness' : 'log';
}

/** The key itself when it speaks for `role`; a key of the other role is refused, never tried. */
export function keyFor<K extends { readonly name: string; readonly type: SignatureType }>(
  role: KeyRole,
  key: K,
): K {
  const actual = roleOf(key);
  if (actual !== role)
    throw new NoteError('key_role', `${key.name} is ${ROLE_KEY[actual]}, not ${ROLE_KEY[role]}`);
  return key;
}
