import type { Redis } from 'ioredis';
import type { AuditEntry, ChainBreak, ChainHead, Checkpoint, VerifyReport } from '../audit-log.js';
import { ChainVerifier } from '../chain-verifier.js';
import { sealedLink } from '../sealed-link.js';
import { decodeEntry } from './entry-codec.js';
import { type RedisAuditKeys, streamId } from './redis-keys.js';
import { scanStream, type StreamItem } from './stream-reader.js';

/**
 * Feeds stream items to a ChainVerifier, adding the checks only the Redis layout can
 * make: an item that is not an entry, or an entry stored under another seq's stream id.
 */
async function feed(
  redis: Redis,
  keys: RedisAuditKeys,
  verifier: ChainVerifier,
  range: { fromSeq: number; toSeq?: number; chunkEntries: number },
): Promise<ChainBreak | undefined> {
  let layoutBreak: ChainBreak | undefined;
  let expected = range.fromSeq;
  await scanStream(redis, keys, range, (item: StreamItem) => {
    // Stored bytes that prove their own hash need no parse; anything else takes the full path.
    const link = item.text === undefined ? undefined : sealedLink(item.text);
    const entry = link ?? decodeItem(item);
    if ('invalid' in entry) {
      layoutBreak = { seq: expected, reason: `stream item ${item.streamId}: ${entry.invalid}` };
      return false;
    }
    if (item.streamId !== streamId(entry.seq)) {
      layoutBreak = {
        seq: expected,
        entry_id: entry.id,
        reason: `stream item ${item.streamId} holds an entry with seq ${entry.seq}`,
      };
      return false;
    }
    if (link ? verifier.pushSealed(link) : verifier.push(entry as AuditEntry)) return false;
    expected = entry.seq + 1;
    return true;
  });
  return layoutBreak;
}

function decodeItem(item: StreamItem): AuditEntry | { invalid: string } {
  return item.text === undefined ? { invalid: 'no entry field' } : decodeEntry(item.text);
}

/**
 * Verifies the whole stream against the checkpoints and the stored chain head; after a
 * trim, from the retention anchor on (checkpoints before it name archived entries).
 */
export async function verifyStream(
  redis: Redis,
  keys: RedisAuditKeys,
  checkpoints: readonly Checkpoint[],
  storedHead: ChainHead,
  chunkEntries: number,
  anchor: ChainHead | null = null,
): Promise<VerifyReport> {
  const verifier = new ChainVerifier(anchor, fromAnchor(checkpoints, anchor));
  const layoutBreak = await feed(redis, keys, verifier, { fromSeq: (anchor?.seq ?? 0) + 1, chunkEntries });
  const report = verifier.finish();
  const atAnchor = anchor && checkpoints.find((c) => c.seq === anchor.seq && c.hash !== anchor.hash);
  if (atAnchor) {
    const reason = `checkpoint at seq ${anchor.seq} names another hash than the retention anchor`;
    return { ...report, ok: false, break: { seq: anchor.seq, reason } };
  }
  if (layoutBreak) return { ...report, ok: false, break: layoutBreak };
  if (!report.ok) return report;
  if (storedHead.seq > report.head.seq) {
    const reason = `log ends at seq ${report.head.seq} but the chain head records seq ${storedHead.seq}: entries were truncated`;
    return { ...report, ok: false, break: { seq: report.head.seq + 1, reason } };
  }
  if (storedHead.seq !== report.head.seq || storedHead.hash !== report.head.hash) {
    const reason = `the chain head (seq ${storedHead.seq}) does not match the last entry (seq ${report.head.seq})`;
    return { ...report, ok: false, break: { seq: storedHead.seq, reason } };
  }
  return report;
}

/**
 * True when the chain holds from the nearest checkpoint before seq up to seq itself. The
 * retention anchor counts as a checkpoint, and those before it are ignored; one at its seq,
 * kept outside Redis, takes its place. The caller answers false for archived seqs.
 */
export async function verifyUpTo(
  redis: Redis,
  keys: RedisAuditKeys,
  seq: number,
  checkpoints: readonly Checkpoint[],
  chunkEntries: number,
  anchor: ChainHead | null = null,
): Promise<boolean> {
  // Those past seq are never reached: the feed stops at seq, and only the head is read.
  const usable = fromAnchor(checkpoints, anchor);
  const start = usable.filter((c) => c.seq < seq).sort((a, b) => b.seq - a.seq)[0] ?? anchor;
  const verifier = new ChainVerifier(start, usable);
  await feed(redis, keys, verifier, { fromSeq: (start?.seq ?? 0) + 1, toSeq: seq, chunkEntries });
  // The head reaches seq only if every entry up to it was fed and accepted: a break in
  // the chain or in the stream's layout stops the feed before it.
  return verifier.finish().head.seq === seq;
}

/** The checkpoints from the anchor's seq on: those before it name archived entries. */
function fromAnchor(checkpoints: readonly Checkpoint[], anchor: ChainHead | null): Checkpoint[] {
  return checkpoints.filter((c) => c.seq >= (anchor?.seq ?? 0));
}
