import { readFile, readdir, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../audit-log.js';
import { storedText } from '../chain.js';
import { AUDIT_LOG_FILE } from './file-audit-log.js';
import { openLogFile, type LogFile } from './log-file.js';
import { RetainedCopy, retainedStart } from './retained-copy.js';
import { anchorAt, recordingReads, sealedChain, tempDir, type RecordedRead } from './test-fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
let opened: LogFile[] = [];
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(async () => {
  await Promise.all(opened.map((file) => file.close().catch(() => undefined)));
  opened = [];
  await cleanup();
});

/** Entries 1..n, linked. */
const chain = (n: number): AuditEntry[] => sealedChain(n, (i) => ({ decision_id: `dec-${i}` }));

const line = (entry: AuditEntry): string => `${storedText(entry)}\n`;
const bytes = (text: string): number => Buffer.byteLength(text);

/** The log file holding `text`, opened. */
async function logWith(text: string): Promise<LogFile> {
  await writeFile(join(dir, AUDIT_LOG_FILE), text);
  const file = await openLogFile(join(dir, AUDIT_LOG_FILE));
  opened.push(file);
  return file;
}

describe('retainedStart', () => {
  const entries = chain(5);
  const [e1, e2, e3, e4, e5] = entries as [AuditEntry, AuditEntry, AuditEntry, AuditEntry, AuditEntry];

  it('cuts at the byte after the anchor line, passing over blank and whitespace-only lines', async () => {
    const head = `\n${line(e1)}  \n${line(e2)}\n${line(e3)}`;
    const file = await logWith(`${head}${line(e4)}`);
    expect(await retainedStart(file, anchorAt(e3))).toBe(bytes(head));
  });

  it('cuts after the first line when the file starts with the anchor (an earlier cut left it there)', async () => {
    const file = await logWith(`${line(e3)}${line(e4)}`);
    expect(await retainedStart(file, anchorAt(e3))).toBe(bytes(line(e3)));
  });

  it('has nothing to cut when the file starts after the anchor, or is empty', async () => {
    expect(await retainedStart(await logWith(`${line(e4)}${line(e5)}`), anchorAt(e3))).toBeUndefined();
    expect(await retainedStart(await logWith(''), anchorAt(e3))).toBeUndefined();
  });

  it("refuses a file that skips the anchor's seq, naming the byte where it went past", async () => {
    const head = `${line(e1)}${line(e2)}`;
    const file = await logWith(`${head}${line(e4)}${line(e5)}`);
    await expect(retainedStart(file, anchorAt(e3))).rejects.toMatchObject({
      code: 'CONFLICT',
      message: `the audit log has no entry 3 before byte ${bytes(head)}: not cut at the retention anchor`,
    });
  });

  it('refuses a file whose first line is not an entry (the file was damaged)', async () => {
    const file = await logWith(`{"seq":1,"torn\n${line(e2)}${line(e3)}`);
    await expect(retainedStart(file, anchorAt(e3))).rejects.toMatchObject({
      code: 'CONFLICT',
      message: 'the audit log has no entry 3 before byte 0: not cut at the retention anchor',
    });
  });

  it("refuses a file that ends before the anchor's entry", async () => {
    const file = await logWith(`${line(e1)}${line(e2)}`);
    await expect(retainedStart(file, anchorAt(e3))).rejects.toMatchObject({
      code: 'CONFLICT',
      message: "the audit log ends before the retention anchor's entry 3",
    });
  });

  it("refuses to cut when the entry at the anchor's seq has another id or hash", async () => {
    const file = await logWith(`${line(e1)}${line(e2)}${line(e3)}`);
    const refusal = {
      code: 'CONFLICT',
      message: `audit entry 3 is not the retention anchor's (hash ${e3.hash}): not cut`,
    };
    await expect(retainedStart(file, { ...anchorAt(e3), entry_id: 'e-other' })).rejects.toMatchObject(
      refusal,
    );
    await expect(retainedStart(file, { ...anchorAt(e3), hash: e2.hash })).rejects.toMatchObject(refusal);
  });
});

describe('RetainedCopy', () => {
  const entries = chain(6);
  const archived = entries.slice(0, 2).map(line).join('');
  const retained = entries.slice(2).map(line);
  const text = archived + retained.join('');
  /** Where retained line i (0-based) ends in the source log. */
  const endOfRetained = (i: number): number => bytes(archived + retained.slice(0, i + 1).join(''));

  /** A copy of the log holding `text`, cut after entry 2; `copyReads` records the copy's reads. */
  async function copyOfLog(): Promise<{ copy: RetainedCopy; copyReads: RecordedRead[] }> {
    const source = await logWith(text);
    const cut = await retainedStart(source, anchorAt(entries[1]!));
    let copyReads: RecordedRead[] = [];
    const copy = await RetainedCopy.begin({
      dir,
      target: join(dir, AUDIT_LOG_FILE),
      source: () => source,
      cut: cut!,
      openFile: async (path) => {
        const recorded = recordingReads(await openLogFile(path));
        opened.push(recorded.file);
        copyReads = recorded.reads;
        return recorded.file;
      },
    });
    return { copy, copyReads };
  }

  const seqsIn = (copy: RetainedCopy): (number | undefined)[] =>
    entries.map((e) => (copy.index.positionOfSeq(e.seq) === undefined ? undefined : e.seq));

  it('copies only up to the byte asked although the log holds more (appends go on meanwhile)', async () => {
    const { copy } = await copyOfLog();
    await copy.copyUpTo(endOfRetained(1));
    expect(copy.length).toBe(bytes(retained[0]! + retained[1]!));
    expect(copy.head?.seq).toBe(4);
    await copy.replace();
    expect(await readFile(join(dir, AUDIT_LOG_FILE), 'utf8')).toBe(retained[0]! + retained[1]!);
  });

  it('indexes a line copied in two parts once it is whole: nothing retained is lost', async () => {
    const { copy } = await copyOfLog();
    await copy.copyUpTo(endOfRetained(1) - 10);
    expect(seqsIn(copy)).toEqual([undefined, undefined, 3, undefined, undefined, undefined]);
    await copy.copyUpTo(bytes(text));
    expect(seqsIn(copy)).toEqual([undefined, undefined, 3, 4, 5, 6]);
    expect(copy.head).toEqual({ seq: 6, hash: entries[5]!.hash, entry_id: 'e-6' });
    expect(copy.index.location(copy.index.positionOfSeq(4)!)).toMatchObject({
      offset: bytes(retained[0]!),
      length: bytes(retained[1]!) - 1,
    });
    await copy.replace();
    expect(await readFile(join(dir, AUDIT_LOG_FILE), 'utf8')).toBe(retained.join(''));
  });

  it('indexes only what it has not indexed yet: a later copy reads the copy from the first new line', async () => {
    const { copy, copyReads } = await copyOfLog();
    await copy.copyUpTo(endOfRetained(1));
    copyReads.length = 0;
    await copy.copyUpTo(bytes(text));
    const indexedBefore = bytes(retained[0]! + retained[1]!);
    expect(copyReads).toEqual([{ position: indexedBefore, length: copy.length - indexedBefore }]);
  });

  it('fails, and does not wait forever, when the log ends before the byte asked', async () => {
    const { copy } = await copyOfLog();
    await expect(copy.copyUpTo(bytes(text) + 10)).rejects.toMatchObject({
      code: 'INTERNAL',
      message: `the audit log ends before byte ${bytes(text) + 10}`,
    });
  }, 5_000);

  it('leaves no descriptor of the directory open after syncing the rename, and no copy behind', async () => {
    const { copy } = await copyOfLog();
    await copy.copyUpTo(bytes(text));
    await copy.replace();
    await copy.syncDirectory();
    const fds = await readdir('/proc/self/fd');
    const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
    expect(targets).not.toContain(dir);
    expect(await readdir(dir)).toEqual([AUDIT_LOG_FILE]);
  });
});
