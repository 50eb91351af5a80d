import { entryLeafHash } from './chain.js';
import { parseEntryLine } from './entry-shape.js';
import { appendLeaf, EMPTY_FRONTIER, frontierRoot, type TreeFrontier } from './merkle/tree-frontier.js';
import { type CheckpointBody, parseCheckpoint } from './note/checkpoint-note.js';
import { keyFor } from './note/key-role.js';
import type { NoteVerifierKey } from './note/note-keys.js';
import { openNote } from './note/signed-note.js';

export interface SignedRootReport {
  ok: boolean;
  /** Signed checkpoints whose signature and root were checked against the export. */
  signed_checkpoints_checked: number;
  break?: { size: number; reason: string };
}

/**
 * Recomputes the Merkle root of an export at the size of every signed checkpoint it
 * covers (`arbiter audit verify FILE --vkey`), after checking each checkpoint's
 * signature: a history rewritten along with its chain hashes still fails here, since
 * nobody without the key can sign its roots. Needs the export from seq 1 onwards. The key
 * must be the log's: a witness key is refused before any note is read.
 */
export class SignedRootChecker {
  private frontier: TreeFrontier = EMPTY_FRONTIER;
  private readonly pending: CheckpointBody[] = [];
  private checked = 0;
  private broken: SignedRootReport['break'];
  private stopped = false;

  constructor(logKey: NoteVerifierKey, notes: readonly string[]) {
    const keys = [keyFor('log', logKey)];
    for (const note of notes) {
      try {
        this.pending.push(parseCheckpoint(openNote(note, keys).text));
      } catch (err) {
        this.broken ??= {
          size: 0,
          reason: `a checkpoint's signature does not verify: ${(err as Error).message}`,
        };
      }
    }
    this.pending.sort((a, b) => a.size - b.size);
  }

  pushLine(text: string): void {
    if (this.broken || this.stopped || text.trim() === '') return;
    const parsed = parseEntryLine(text);
    if (parsed.kind !== 'entry' || parsed.entry.seq !== this.frontier.size + 1) {
      // Not contiguous from seq 1 (a filtered or partial export): no root can be recomputed past here.
      this.stopped = true;
      return;
    }
    this.frontier = appendLeaf(this.frontier, entryLeafHash(parsed.entry)).frontier;
    while (this.pending[0]?.size === this.frontier.size) {
      const checkpoint = this.pending.shift()!;
      if (!frontierRoot(this.frontier).equals(checkpoint.root)) {
        this.broken = {
          size: checkpoint.size,
          reason: `the entries up to seq ${checkpoint.size} do not have the signed root`,
        };
        return;
      }
      this.checked += 1;
    }
  }

  finish(): SignedRootReport {
    return {
      ok: this.broken === undefined,
      signed_checkpoints_checked: this.checked,
      ...(this.broken ? { break: this.broken } : {}),
    };
  }
}
