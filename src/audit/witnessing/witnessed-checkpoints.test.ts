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

/** An HTTP server answering every request with what `answer` says; `type: null` sends no Content-Type. */
async function startHostile(
  answer: (body: string) => { status: number; type?: string | null; body: string },
  requests: { path?: string; type?: string }[] = [],
) {
  const server = createServer((req, res) => {
    requests.push({ path: req.url, type: req.headers['content-type'] });
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const reply = answer(body);
      const type = reply.type === undefined ? 'text/plain' : reply.type;
      res.writeHead(reply.status, type === null ? {} : { 'Content-Type': type });
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

  /** Asks the witness at url to cosign a checkpoint of size 5 (from 0): its answer, or how it failed. */
  async function attempt(url: string, key = verifierOf(witnessKey)): Promise<string | WitnessFailure> {
    const log = await treeOf(5);
    const root = await log.tree().root(5);
    const note = signNote(formatCheckpoint({ origin: ORIGIN, size: 5, root }), [logKey]);
    try {
      return await new HttpWitness({ url, key, timeoutMs: 500 }).cosign({
        note,
        size: 5,
        previousSize: 0,
        tree: log.tree(),
      });
    } catch (err) {
      if (err instanceof WitnessFailure) return err;
      throw err;
    } finally {
      await log.close();
    }
  }

  async function cosignWith(url: string, key = verifierOf(witnessKey)): Promise<WitnessFailure> {
    const result = await attempt(url, key);
    if (typeof result === 'string') throw new Error('cosign succeeded');
    return result;
  }

  /** The checkpoint text of a request body (`old N`, proof lines, blank line, then the signed note). */
  function checkpointTextOf(body: string): string {
    const note = body.slice(body.indexOf('\n\n') + 2);
    return note.slice(0, note.lastIndexOf('\n\n') + 1);
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

  it('posts the request as UTF-8 text to <url>/add-checkpoint, whatever slashes end the URL', async () => {
    const requests: { path?: string; type?: string }[] = [];
    const url = await startHostile(
      (body) => ({ status: 200, body: signatureLine(checkpointTextOf(body), witnessKey, 3) }),
      requests,
    );
    expect(typeof (await attempt(`${url}//`))).toBe('string');
    expect(requests).toEqual([{ path: '/add-checkpoint', type: 'text/plain; charset=utf-8' }]);
  });

  it('returns every line of the answer when all are valid cosignatures, as one block', async () => {
    let lines = '';
    const url = await startHostile((body) => {
      const text = checkpointTextOf(body);
      lines = signatureLine(text, witnessKey, 3) + signatureLine(text, witnessKey, 4);
      return { status: 200, body: lines };
    });
    expect(await attempt(url)).toBe(lines);
  });

  it('bounds the answer to 64 KiB and says why it refused one', async () => {
    const huge = await startHostile(() => ({ status: 200, body: 'x'.repeat(65_537) }));
    expect((await cosignWith(huge)).message).toBe(
      'witness witness.test/w1: the answer is larger than 65536 bytes',
    );
    const atLimit = await startHostile(() => ({ status: 200, body: 'x'.repeat(65_536) }));
    expect((await cosignWith(atLimit)).message).toBe(
      'witness witness.test/w1: the answer is not a valid cosignature by the witness key',
    );
  });

  it('retries a 409 once, only from a new size the witness names in its size format', async () => {
    const cases: { type: string | null; body: string; status?: number; retried: boolean }[] = [
      { type: 'text/x.tlog.size', body: '3', retried: true },
      { type: 'text/x.tlog.size; charset=utf-8', body: '3\n', retried: true },
      { type: 'text/x.tlog.size', body: '0\n', retried: false }, // the size it was proven from
      { type: 'text/plain', body: '3\n', retried: false },
      { type: null, body: '3\n', retried: false },
      { type: 'text/x.tlog.size', body: 'x3\n', retried: false },
      { type: 'text/x.tlog.size', body: '3\nx', retried: false },
      { type: 'text/x.tlog.size', body: '03\n', retried: false },
      { type: 'text/x.tlog.size', body: '3\n', status: 422, retried: false },
    ];
    for (const { type, body, status, retried } of cases) {
      const requests: { path?: string }[] = [];
      const url = await startHostile(() => ({ status: status ?? 409, type, body }), requests);
      const failure = await cosignWith(url);
      expect(failure.reason, `${status ?? 409} ${type} ${JSON.stringify(body)}`).toBe('refused');
      expect(requests.length, `${type} ${JSON.stringify(body)}`).toBe(retried ? 2 : 1);
    }
    // A two-digit size is read whole: here beyond the checkpoint, so nothing is asked again.
    const beyond = await startHostile(() => ({ status: 409, type: 'text/x.tlog.size', body: '12\n' }));
    expect((await cosignWith(beyond)).message).toMatch(/cosigned size 12, beyond this checkpoint's 5/);
  });

  it('names each refusal with the status and the start of what the witness said', async () => {
    const said = `  ${'w'.repeat(400)}  `;
    const expected = 'w'.repeat(300);
    const message = async (status: number, type = 'text/plain') =>
      (await cosignWith(await startHostile(() => ({ status, type, body: said })))).message;
    expect(await message(409)).toBe(
      `witness witness.test/w1: refused (409) a checkpoint proven from size 0: it has cosigned another history (${expected})`,
    );
    expect(await message(422)).toBe(
      `witness witness.test/w1: refused (422): the history it cosigned does not extend to this checkpoint (${expected})`,
    );
    expect(await message(400)).toBe(`witness witness.test/w1: answered 400: ${expected}`);
    const reasons: [number, string][] = [
      [400, 'rejected'],
      [499, 'rejected'],
      [500, 'unreachable'],
      [204, 'unreachable'],
      [422, 'refused'],
    ];
    for (const [status, reason] of reasons) {
      const url = await startHostile(() => ({ status, body: status === 204 ? '' : 'no' }));
      expect((await cosignWith(url)).reason, `${status}`).toBe(reason);
    }
  });

  it('says where it could not reach the witness', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const failure = await cosignWith(`http://127.0.0.1:${port}`);
    expect(failure.reason).toBe('unreachable');
    expect(failure.message).toMatch(
      new RegExp(`^witness witness\\.test/w1: POST http://127\\.0\\.0\\.1:${port}/add-checkpoint: `),
    );
  });
});
