import { readFile } from 'node:fs/promises';
import { type NoteVerifierKey, parseVerifierKey } from '../audit/note/note-keys.js';

/** A --vkey-style argument: the verifier key itself, or a file holding it. */
export async function verifierKeyArg(value: string): Promise<NoteVerifierKey> {
  const text = await readFile(value, 'utf8').catch(() => value); // not a file: the key itself
  return parseVerifierKey(text.trim());
}
