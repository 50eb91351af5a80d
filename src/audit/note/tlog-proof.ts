import { HASH_BYTES, type TreeHash } from '../merkle/tree-hash.js';
import { NoteError } from './note-error.js';

const HEADER = 'c2sp.org/tlog-proof@v1';

/** A C2SP tlog-proof: an entry's index, its inclusion proof, and the signed checkpoint it leads to. */
export interface TlogProof {
  readonly index: number;
  readonly hashes: readonly TreeHash[];
  /** The signed checkpoint note, verbatim. */
  readonly checkpoint: string;
  /** Opaque, unauthenticated extra data. */
  readonly extra?: Buffer;
}

export function formatTlogProof(proof: TlogProof): string {
  const lines = [
    HEADER,
    ...(proof.extra ? [`extra ${proof.extra.toString('base64')}`] : []),
    `index ${proof.index}`,
    ...proof.hashes.map((hash) => hash.toString('base64')),
  ];
  return `${lines.join('\n')}\n\n${proof.checkpoint}`;
}

const fail = (message: string): never => {
  throw new NoteError('note_malformed', `tlog-proof: ${message}`);
};

function canonicalBase64(text: string, what: string): Buffer {
  const bytes = Buffer.from(text, 'base64');
  if (text.length === 0 || bytes.toString('base64') !== text) fail(`${what} is not canonical base64`);
  return bytes;
}

/** Parses a tlog-proof; the checkpoint stays text, to be opened with the log's key. */
export function parseTlogProof(text: string): TlogProof {
  const split = text.indexOf('\n\n');
  if (split < 0) fail('no empty line before the checkpoint');
  const lines = text.slice(0, split).split('\n');
  const checkpoint = text.slice(split + 2);
  if (lines.shift() !== HEADER) fail(`the first line must be ${HEADER}`);
  let extra: Buffer | undefined;
  if (lines[0]?.startsWith('extra ')) extra = canonicalBase64(lines.shift()!.slice('extra '.length), 'extra');
  const indexLine = lines.shift() ?? '';
  const match = /^index (0|[1-9][0-9]*)$/.exec(indexLine);
  const index = Number(match?.[1]);
  if (!match || !Number.isSafeInteger(index)) fail(`"${indexLine}" is not an index line`);
  const hashes = lines.map((line, i) => {
    const hash = canonicalBase64(line, `proof hash ${i + 1}`);
    if (hash.length !== HASH_BYTES) fail(`proof hash ${i + 1} is not 32 bytes`);
    return hash;
  });
  if (checkpoint.length === 0) fail('no checkpoint after the empty line');
  return { index, hashes, checkpoint, ...(extra ? { extra } : {}) };
}
