import { fromBase64, HASH_BYTES, ProofCheckError } from './tree-hash.js';

/** A C2SP tlog-checkpoint inside a signed note, with the names of its signers. */
export interface SignedCheckpoint {
  origin: string;
  size: number;
  root: Uint8Array<ArrayBuffer>;
  /** The signed text (origin, size, root, extensions), as the signatures cover it. */
  text: string;
  /** Signature lines in order: the log's first, then witnesses' cosignatures. */
  signatures: { name: string; keyId: string; payload: Uint8Array<ArrayBuffer> }[];
}

const SIGNATURE_LINE = /^\u2014 (\S+) ([A-Za-z0-9+/]+={0,2})$/;

/** Parses a signed checkpoint note strictly: the size and root come from nowhere else. */
export function parseSignedCheckpoint(note: string): SignedCheckpoint {
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new ProofCheckError('the checkpoint is not a signed note');
  const text = note.slice(0, split + 1);
  const lines = text.slice(0, -1).split('\n');
  const [origin, sizeText, rootText] = lines;
  if (!origin || sizeText === undefined || rootText === undefined) {
    throw new ProofCheckError('the checkpoint needs an origin, a size and a root hash');
  }
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) {
    throw new ProofCheckError(`checkpoint size "${sizeText}" is not a tree size`);
  }
  const root = fromBase64(rootText);
  if (root.length !== HASH_BYTES) throw new ProofCheckError('the checkpoint root is not 32 bytes');
  const signatures = note
    .slice(split + 2, -1)
    .split('\n')
    .map((line) => {
      const match = SIGNATURE_LINE.exec(line);
      if (!match) throw new ProofCheckError('a signature line of the checkpoint is malformed');
      const bytes = fromBase64(match[2]!);
      if (bytes.length < 5) throw new ProofCheckError(`the signature of ${match[1]} is too short`);
      const keyId = Array.from(bytes.slice(0, 4), (b) => b.toString(16).padStart(2, '0')).join('');
      return { name: match[1]!, keyId, payload: bytes.slice(4) };
    });
  return { origin, size: Number(sizeText), root, text, signatures };
}
