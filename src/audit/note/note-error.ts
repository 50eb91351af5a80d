/** A note, key or checkpoint that cannot be trusted, with a stable code for the API and CLI. */
export class NoteError extends Error {
  constructor(
    readonly code:
      | 'note_malformed'
      | 'note_unverified'
      | 'key_malformed'
      | 'key_role'
      | 'checkpoint_malformed'
      | 'cosignature_invalid',
    message: string,
  ) {
    super(message);
  }
}
