import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startWitnessServer } from '../../witness/witness-server.js';
import { WitnessState } from '../../witness/witness-state.js';
import type { AuditLogger } from '../audit-logger.js';
import type { Checkpoint } from '../audit-log.js';
import { cosignedNote } from '../checkpoint-shape.js';
import type { CheckpointEvents } from '../checkpoint-signer.js';
import { FileCheckpointStore } from '../file/checkpoint-store.js';
import type { FileAuditLog } from '../file/file-audit-log.js';
import { event, openLog } from '../file/test-fixtures.js';
import { formatCheckpoint, parseCheckpoint } from '../note/checkpoint-note.js';
import { generateSigningKey, SIGNATURE_TYPE, verifierOf } from '../note/note-keys.js';
import { openNote, signatureLine, signNote } from '../note/signed-note.js';
import { HttpWitness } from './http-witness.js';
import { type CheckpointWitness, WitnessFailure } from './checkpoint-witness.js';

const ORIGIN = 'arbiter.test/audit';
const logKey = generateSigningKey(ORIGIN);
const witnessKey = generateSigningKey('witness.test/w1', SIGNATURE_TYPE.cosignatureV1);
const EVERY_TEN = { entries: 10, seconds: 3600 };

let dir: string;
let servers: Server[];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arbiter-witnessed-'));
  servers = [];
});
afterEach(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  await rm(dir, { recursive: true, force: true });
});

/** A real `arbiter witness` server trusting logKey, its state in dir. */
async function startWitness(stateFile = 'witness-state.json'): Promise<{ url: string; refusals: number[] }> {
  const refusals: number[] = [];
  const { server, port } = await startWitnessServer(
    {
      key: witnessKey,
      logKeys: new Map([[ORIGIN, [verifierOf(logKey)]]]),
      state: await WitnessState.open(join(dir, stateFile)),
      onRefused: (status) => refusals.push(status),
    },
    0,
    '127.0.0.1',
  );
  servers.push(server);
  return { url: `http://127.0.0.1:${port}`, refusals };
}

/** An HTTP server answering every request with what `answer` says. */
async function startHostile(answer: (body: string) => { status: number; type?: string; body: string }) {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const reply = answer(body);
      res.writeHead(reply.status, { 'Content-Type': reply.type ?? 'text/plain' });
      res.end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function recorder() {
  const errors: { message: string; details: Record<string, unknown> }[] = [];
  const failures: string[] = [];
  const logger: AuditLogger = {
    info: () => undefined,
    warn: () => undefined,
    error: (details, message) => errors.push({ message, details: details as Record<string, unknown> }),
  };
  const events: CheckpointEvents = {
    witnessFailed: (witness, reason) => failures.push(`${witness} ${reason}`),
  };
  return { logger, events, errors, failures };
}

async function openWitnessedLog(
  logDir: string,
  witnesses: CheckpointWitness[],
  seen: ReturnType<typeof recorder>,
): Promise<FileAuditLog> {
  return openLog(logDir, {
    checkpointEvery: EVERY_TEN,
    logger: seen.logger,
    signing: { key: logKey, origin: ORIGIN, witnesses, events: seen.events },
  });
}

async function append(log: FileAuditLog, count: number, tag: string): Promise<void> {
  for (let i = 0; i < count; i++) await log.append(event({ decision_id: `${tag}-${i}` }));
}

/** The signed checkpoints the log in `logDir` stored, oldest first. */
async function signedIn(logDir: string): Promise<(Checkpoint & { note: string })[]> {
  const checkpoints = await new FileCheckpointStore({ dir: logDir, retain: 100 }).list();
  return checkpoints.filter((c): c is Checkpoint & { note: string } => c.note !== undefined);
}

describe('witnessed checkpoints of the audit log (arbiter serve --witness)', () => {
  it('stores each witness cosignature with its signed checkpoint; the note with them opens with the witness key', async () => {
    const witness = await startWitness();
    const seen = recorder();
    const logDir = join(dir, 'log');
    const log = await openWitnessedLog(
      logDir,
      [new HttpWitness({ url: witness.url, key: verifierOf(witnessKey) })],
      seen,
    );
    await append(log, 25, 'a');
    await log.close();
    const checkpoints = await signedIn(logDir);
    expect(checkpoints.map((c) => c.seq)).toEqual([10, 20, 25]);
    for (const checkpoint of checkpoints) {
      expect(checkpoint.cosignatures).toHaveLength(1);
      const note = cosignedNote(checkpoint);
      const opened = openNote(note, [verifierOf(witnessKey)]);
      expect(opened.verified.map((s) => s.name)).toEqual(['witness.test/w1']);
      expect(parseCheckpoint(opened.text).size).toBe(checkpoint.seq);
      // The log's own signature is still there and still verifies.
      expect(openNote(note, [verifierOf(logKey)]).verified).toHaveLength(1);
    }
    expect(seen.errors).toEqual([]);
    expect(witness.refusals).toEqual([]);
  });

  it('learns the size a witness last cosigned from its 409 and proves from there (a witness added to a running log)', async () => {
    const witness = await startWitness();
    const logDir = join(dir, 'log');
    const log = await openWitnessedLog(logDir, [], recorder());
    await append(log, 20, 'a');
    await log.close();
    // The witness has cosigned nothing; the log's last signed checkpoint is 20.
    const seen = recorder();
    const reopened = await openWitnessedLog(
      logDir,
      [new HttpWitness({ url: witness.url, key: verifierOf(witnessKey) })],
      seen,
    );
    await append(reopened, 10, 'b');
    await reopened.close();
    const checkpoints = await signedIn(logDir);
    expect(checkpoints.map((c) => [c.seq, c.cosignatures?.length])).toEqual([
      [10, undefined],
      [20, undefined],
      [30, 1],
    ]);
    expect(witness.refusals).toEqual([409]);
    expect(seen.failures).toEqual([]);
  });

  it('after a restart, proves from the last signed checkpoint, which the witness cosigned', async () => {
    const witness = await startWitness();
    const logDir = join(dir, 'log');
    const key = verifierOf(witnessKey);
    const log = await openWitnessedLog(logDir, [new HttpWitness({ url: witness.url, key })], recorder());
    await append(log, 20, 'a');
    await log.close();
    const seen = recorder();
    const reopened = await openWitnessedLog(logDir, [new HttpWitness({ url: witness.url, key })], seen);
    await append(reopened, 10, 'b');
    await reopened.close();
    const checkpoints = await signedIn(logDir);
    expect(checkpoints.map((c) => [c.seq, c.cosignatures?.length])).toEqual([
      [10, 1],
      [20, 1],
      [30, 1],
    ]);
    expect(witness.refusals).toEqual([]);
    expect(seen.failures).toEqual([]);
  });

  it('a rewritten history is refused by the witness: an error in the log and a failure counted, the checkpoint uncosigned', async () => {
    const witness = await startWitness();
    const honest = recorder();
    const key = verifierOf(witnessKey);
    const real = await openWitnessedLog(
      join(dir, 'real'),
      [new HttpWitness({ url: witness.url, key })],
      honest,
    );
    await append(real, 20, 'real');
    await real.close();
    // The same signing key over another history (the log deleted and rewritten).
    const forger = recorder();
    const rewritten = await openWitnessedLog(
      join(dir, 'rewritten'),
      [new HttpWitness({ url: witness.url, key })],
      forger,
    );
    await append(rewritten, 30, 'forged');
    await rewritten.close();
    const checkpoints = await signedIn(join(dir, 'rewritten'));
    expect(checkpoints.map((c) => c.seq)).toEqual([10, 20, 30]);
    expect(checkpoints.every((c) => c.cosignatures === undefined)).toBe(true);
    expect(forger.failures).toEqual([
      'witness.test/w1 refused',
      'witness.test/w1 refused',
      'witness.test/w1 refused',
    ]);
    expect(forger.errors.map((e) => e.message)).toContain(
      'audit checkpoint REFUSED by a witness: its history does not extend to this one',
    );
    expect(forger.errors[0]?.details).toMatchObject({
      witness: 'witness.test/w1',
      reason: 'refused',
      size: 10,
    });
    expect(witness.refusals.length).toBeGreaterThanOrEqual(3);
    expect(witness.refusals.every((status) => status === 409 || status === 422)).toBe(true);
  });

  it('one witness failing does not keep the others from cosigning', async () => {
    const good = await startWitness();
    const seen = recorder();
    const logDir = join(dir, 'log');
    const log = await openWitnessedLog(
      logDir,
      [
        new HttpWitness({
          url: 'http://127.0.0.1:1',
          key: verifierOf(generateSigningKey('witness.test/down', SIGNATURE_TYPE.cosignatureV1)),
        }),
        new HttpWitness({ url: good.url, key: verifierOf(witnessKey) }),
      ],
      seen,
    );
    await append(log, 10, 'a');
    await log.close();
    const [checkpoint] = await signedIn(logDir);
    expect(checkpoint?.cosignatures).toHaveLength(1);
    expect(seen.failures).toEqual(['witness.test/down unreachable']);
    expect(seen.errors.map((e) => e.message)).toEqual(['audit checkpoint not cosigned by a witness']);
  });
});

describe('HttpWitness against hostile or broken witnesses', () => {
  async function treeOf(count: number) {
    const log = await openLog(join(dir, 'log'), { checkpointEvery: EVERY_TEN });
    await append(log, count, 'a');
    return log;
  }

  async function cosignWith(url: string, key = verifierOf(witnessKey)): Promise<WitnessFailure> {
    const log = await treeOf(5);
    const root = await log.tree().root(5);
    const note = signNote(formatCheckpoint({ origin: ORIGIN, size: 5, root }), [logKey]);
    try {
      await new HttpWitness({ url, key, timeoutMs: 500 }).cosign({
        note,
        size: 5,
        previousSize: 0,
        tree: log.tree(),
      });
    } catch (err) {
      return err as WitnessFailure;
    } finally {
      await log.close();
    }
    throw new Error('cosign succeeded');
  }

  it('refuses a 200 whose cosignature is by another key, over another text, or not a signature line', async () => {
    const impostor = generateSigningKey('witness.test/w1', SIGNATURE_TYPE.cosignatureV1);
    const answers = [
      (body: string) =>
        signatureLine(body.slice(body.indexOf('\n\n') + 2).split('\n\n')[0]! + '\n', impostor, 1),
      () => signatureLine('arbiter.test/audit\n5\nAAAA\n', witnessKey, 1),
      () => 'not a cosignature\n',
      () => '',
    ];
    for (const answer of answers) {
      const url = await startHostile((body) => ({ status: 200, body: answer(body) }));
      const failure = await cosignWith(url);
      expect(failure).toBeInstanceOf(WitnessFailure);
      expect(failure.reason).toBe('bad_cosignature');
    }
  });

  it('a valid cosignature followed by an injected line is refused whole', async () => {
    const url = await startHostile((body) => {
      const text = body.slice(body.indexOf('\n\n') + 2);
      const checkpointText = text.slice(0, text.lastIndexOf('\n\n') + 1);
      return { status: 200, body: `${signatureLine(checkpointText, witnessKey, 7)}\u2014 evil AAAAAAA=\n` };
    });
    expect((await cosignWith(url)).reason).toBe('bad_cosignature');
  });

  it('names 4xx answers rejected, 5xx and silence unreachable, a second 409 refused', async () => {
    expect((await cosignWith(await startHostile(() => ({ status: 404, body: 'unknown log' })))).reason).toBe(
      'rejected',
    );
    expect((await cosignWith(await startHostile(() => ({ status: 503, body: 'busy' })))).reason).toBe(
      'unreachable',
    );
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    servers.push(silent);
    const hang = await cosignWith(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`);
    silent.closeAllConnections();
    expect(hang.reason).toBe('unreachable');
    let asked = 0;
    const sizes = await startHostile(() => {
      asked += 1;
      return { status: 409, type: 'text/x.tlog.size', body: `${asked + 1}\n` };
    });
    const failure = await cosignWith(sizes);
    expect(failure.reason).toBe('refused');
    expect(asked).toBe(2);
    // A 409 naming a size beyond the checkpoint cannot be proven from.
    const beyond = await startHostile(() => ({ status: 409, type: 'text/x.tlog.size', body: '9\n' }));
    expect((await cosignWith(beyond)).message).toMatch(/cosigned size 9, beyond this checkpoint's 5/);
  });
});
