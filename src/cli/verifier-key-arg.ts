import { readFile } from 'node:fs/promises';
import { type KeyRole, ROLE_KEY, roleOf } from '../audit/note/key-role.js';
import { type NoteVerifierKey, parseVerifierKey } from '../audit/note/note-keys.js';
import { UsageError } from './command-line.js';

/** The flag a verifier key came with, whom its keys must speak for, and where the others go. */
export interface VerifierKeyFlag {
  flag: string;
  role: KeyRole;
  /** This command's flag for keys of the other role, if it has one. */
  otherFlag?: string;
}

const TAKES: Record<KeyRole, string> = {
  log: "a log's verifier key (type 0x01)",
  witness: "a witness's verifier key (type 0x04)",
};

/** What a key of each role vouches for, said when the command has no flag for it. */
const VOUCHES: Record<KeyRole, string> = {
  log: 'whose signature says the log signed a checkpoint, not that a witness saw it',
  witness: 'whose cosignature says the witness saw a checkpoint, not that the log signed it',
};

/**
 * A --vkey-style argument: the verifier key itself, or a file holding it. A key of the
 * other role is a UsageError that says where it belongs.
 */
export async function verifierKeyArg(value: string, expected: VerifierKeyFlag): Promise<NoteVerifierKey> {
  const text = await readFile(value, 'utf8').catch(() => value); // not a file: the key itself
  const key = parseVerifierKey(text.trim());
  const role = roleOf(key);
  if (role !== expected.role) {
    const where = expected.otherFlag ? `: pass it with ${expected.otherFlag}` : `, ${VOUCHES[role]}`;
    throw new UsageError(
      `${expected.flag} takes ${TAKES[expected.role]}; ${key.name} is ${ROLE_KEY[role]}${where}`,
    );
  }
  return key;
}
