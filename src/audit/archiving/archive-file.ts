import { createHash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import type { AuditLog, ChainHead, Checkpoint } from '../audit-log.js';
import { storedText } from '../chain.js';
import { type LineVerifyReport, verifyExportStream } from '../export-verify.js';

const PAGE = 1000;

/** What an archive file holds: the stored lines of seq from_seq..to_seq. */
export interface ArchiveFileSummary {
  file: string;
  from_seq: number;
  to_seq: number;
  entries: number;
  bytes: number;
  /** SHA-256 of the file, to compare a copy kept elsewhere. */
  sha256: string;
}

/**
 * Writes the entries from_seq..to_seq, as stored (what `arbiter audit verify` hashes), to
 * `path` and makes them durable. The caller renames it into place once verified.
 */
export async function writeArchive(
  log: AuditLog,
  path: string,
  fromSeq: number,
  toSeq: number,
): Promise<void> {
  const file = await open(path, 'w', 0o640);
  try {
    let after = fromSeq - 1;
    while (after < toSeq) {
      const page = await log.query({ order: 'asc', limit: Math.min(PAGE, toSeq - after), after });
      const entries = page.entries.filter((e) => e.seq <= toSeq);
      // A short page here is a gap: verification reports it, with the seq.
      if (entries.length === 0) break;
      await file.write(entries.map((e) => `${storedText(e)}\n`).join(''));
      after = entries.at(-1)!.seq;
    }
    await file.sync();
  } finally {
    await file.close();
  }
}

/**
 * Verifies an archive on its own terms: it continues from `start` (the previous anchor,
 * or genesis when null), holds every entry up to the checkpoint `end` and ends at its hash.
 */
export async function verifyArchive(
  path: string,
  start: ChainHead | null,
  end: Checkpoint,
): Promise<LineVerifyReport> {
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  const report = await verifyExportStream(lines, { checkpoints: [end], ...(start ? { start } : {}) });
  // The verifier checked the entry at end.seq against end's hash, and that none is missing
  // before it: what is left is an archive that runs past it.
  if (report.ok && report.head.seq !== end.seq) {
    return {
      ...report,
      ok: false,
      break: {
        seq: report.head.seq + 1,
        reason: `the archive ends at seq ${report.head.seq}, not at checkpoint ${end.seq}`,
      },
    };
  }
  return report;
}

/** Size and SHA-256 of a file. */
export async function digestFile(path: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

/** Renames a complete file into place and makes the rename durable. */
export async function renameDurably(from: string, to: string): Promise<void> {
  await rename(from, to);
  const dir = await open(dirname(to), constants.O_RDONLY);
  // Stryker disable next-line BlockStatement: the folder's fsync keeps the rename through a power cut, which no test can cause
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
