import { NoteError } from './note-error.js';

/** A C2SP tlog-checkpoint body: origin, tree size, root hash, and optional extension lines. */
export interface CheckpointBody {
  readonly origin: string;
  readonly size: number;
  readonly root: Buffer;
  readonly extensions?: readonly string[];
}

export function formatCheckpoint(checkpoint: CheckpointBody): string {
  const lines = [
    checkpoint.origin,
    String(checkpoint.size),
    checkpoint.root.toString('base64'),
    ...(checkpoint.extensions ?? []),
  ];
  return `${lines.join('\n')}\n`;
}

/** Parses a checkpoint note's text; strict, since the size and root come only from here. */
export function parseCheckpoint(text: string): CheckpointBody {
  if (!text.endsWith('\n')) throw new NoteError('checkpoint_malformed', 'checkpoint must end with a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3)
    throw new NoteError('checkpoint_malformed', 'checkpoint needs an origin, a size and a root hash');
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string, ...string[]];
  if (origin.length === 0) throw new NoteError('checkpoint_malformed', 'checkpoint origin is empty');
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) {
    throw new NoteError('checkpoint_malformed', `checkpoint size "${sizeText}" is not a decimal tree size`);
  }
  const root = Buffer.from(rootText, 'base64');
  if (root.length !== 32 || root.toString('base64') !== rootText) {
    throw new NoteError('checkpoint_malformed', 'checkpoint root hash is not the base64 of 32 bytes');
  }
  if (extensions.some((line) => line.length === 0))
    throw new NoteError('checkpoint_malformed', 'checkpoint has an empty extension line');
  return { origin, size: Number(sizeText), root, ...(extensions.length > 0 ? { extensions } : {}) };
}
