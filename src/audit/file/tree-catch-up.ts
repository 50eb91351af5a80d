import type { AuditLogger } from '../audit-logger.js';
import { entryLeafHash } from '../chain.js';
import type { EntryIndex } from './entry-index.js';
import { readEntries } from './entry-reader.js';
import type { LogFile } from './log-file.js';
import type { TreeFile } from './tree-file.js';

const CHUNK = 1000;

/**
 * Brings the tree file level with the log after a restart, from the entries after the
 * last checkpoint only: the tree may lag (a crash between the two writes) or end in
 * records that never reached the disk. Leaves up to the last checkpoint were durable when it
 * was taken and are never re-hashed, so an entry altered in the file since cannot
 * slip into the tree: its proof fails instead.
 */
export async function catchUpTree(options: {
  tree: TreeFile;
  file: LogFile;
  index: EntryIndex;
  /** Entries in the log (the head's seq). */
  logLeaves: number;
  /** seq of the newest checkpoint. */
  checkpointed: number;
  logger: AuditLogger;
}): Promise<void> {
  const { tree, file, index, logLeaves, logger } = options;
  if (tree.size > logLeaves) {
    logger.warn(
      { tree: tree.size, log: logLeaves },
      'audit tree is ahead of the log (a write lost in a crash); cutting it back',
    );
  }
  const level = Math.min(tree.size, logLeaves);
  // The tree file is synced before each checkpoint and not after each batch: what it
  // holds past the last checkpoint may never have reached the disk, so it is hashed again.
  const resume = Math.min(options.checkpointed, level);
  await tree.truncateTo(resume);
  for (let from = resume; from < logLeaves; from += CHUNK) {
    const seqs = Array.from({ length: Math.min(CHUNK, logLeaves - from) }, (_, i) => from + i + 1);
    const positions = seqs.map((seq) => index.positionOfSeq(seq));
    const missing = positions.indexOf(undefined);
    const present = (missing < 0 ? positions : positions.slice(0, missing)) as number[];
    const entries = await readEntries(file, index, present);
    await tree.append(entries.map(entryLeafHash));
    if (missing >= 0) {
      logger.error(
        { seq: seqs[missing] },
        'audit log has no entry at this seq; the Merkle tree stops before it',
      );
      break;
    }
  }
  await tree.sync();
}
