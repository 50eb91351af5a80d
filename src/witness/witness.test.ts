import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { proofHashes } from '../audit/merkle/proof-hashes.js';
import { consistencyPlan } from '../audit/merkle/proof-plan.js';
import {
  appendLeaf,
  EMPTY_FRONTIER,
  frontierRoot,
  type TreeFrontier,
} from '../audit/merkle/tree-frontier.js';
import { leafHash, type TreeHash } from '../audit/merkle/tree-hash.js';
import { type NodeId, nodeKey } from '../audit/merkle/tree-shape.js';
import { formatCheckpoint } from '../audit/note/checkpoint-note.js';
import {
  generateSigningKey,
  type NoteSigningKey,
  SIGNATURE_TYPE,
  verifierOf,
} from '../audit/note/note-keys.js';
import { openNote, signNote } from '../audit/note/signed-note.js';
import { startWitnessServer } from './witness-server.js';
import { WitnessState } from './witness-state.js';

const ORIGIN = 'arbiter.test/audit';

/** A log's tree of `count` leaves named by `tag`, with its signed checkpoints and consistency proofs. */
function logTree(key: NoteSigningKey, tag: string, count: number) {
  const nodes = new Map<string, TreeHash>();
  const roots: TreeHash[] = [];
  let frontier: TreeFrontier = EMPTY_FRONTIER;
  for (let i = 0; i < count; i++) {
    const appended = appendLeaf(frontier, leafHash(`${tag} ${i}`));
    for (const { node, hash } of appended.completed) nodes.set(nodeKey(node), hash);
    frontier = appended.frontier;
    roots.push(frontierRoot(frontier));
  }
  const lookup = (node: NodeId) => nodes.get(nodeKey(node));
  return {
    note: (size: number, origin = ORIGIN) =>
      signNote(formatCheckpoint({ origin, size, root: roots[size - 1]! }), [key]),
    proof: (from: number, to: number) => proofHashes(consistencyPlan(from, to), lookup),
  };
}

const body = (oldSize: number, proof: TreeHash[], note: string) =>
  `old ${oldSize}\n${proof.map((h) => `${h.toString('base64')}\n`).join('')}\n${note}`;

describe('the witness (C2SP tlog-witness add-checkpoint) over HTTP', () => {
  let dir: string;
  let server: Server;
  let url: string;
  const logKey = generateSigningKey(ORIGIN);
  const witnessKey = generateSigningKey('witness.test/w1', SIGNATURE_TYPE.cosignatureV1);
  const log = logTree(logKey, 'entry', 64);

  async function start(): Promise<void> {
    const state = await WitnessState.open(join(dir, 'witness-state.json'));
    const started = await startWitnessServer(
      {
        key: witnessKey,
        logKeys: new Map([[ORIGIN, [verifierOf(logKey)]]]),
        state,
        now: () => new Date(1_790_000_000_000),
      },
      0,
      '127.0.0.1',
    );
    server = started.server;
    url = `http://127.0.0.1:${started.port}/add-checkpoint`;
  }
  const post = async (text: string) => {
    const response = await fetch(url, { method: 'POST', body: text });
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      text: await response.text(),
    };
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arbiter-witness-'));
    await start();
  });
  afterEach(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('cosigns a first checkpoint and then one that extends it; the cosignature verifies with its time', async () => {
    const first = await post(body(0, [], log.note(10)));
    expect(first.status).toBe(200);
    const opened = openNote(`${log.note(10)}${first.text}`, [verifierOf(logKey), verifierOf(witnessKey)]);
    expect(opened.verified.find((s) => s.name === 'witness.test/w1')?.timestamp).toBe(1_790_000_000);
    const next = await post(body(10, log.proof(10, 37), log.note(37)));
    expect(next.status).toBe(200);
    expect(openNote(`${log.note(37)}${next.text}`, [verifierOf(witnessKey)]).verified).toHaveLength(1);
  });

  it('keeps its state across a restart: a stale old size is 409 with the size it cosigned', async () => {
    expect((await post(body(0, [], log.note(10)))).status).toBe(200);
    expect((await post(body(10, log.proof(10, 20), log.note(20)))).status).toBe(200);
    await new Promise((resolve) => server.close(resolve));
    await start();
    const stale = await post(body(10, log.proof(10, 30), log.note(30)));
    expect(stale).toEqual({ status: 409, type: 'text/x.tlog.size', text: '20\n' });
    expect((await post(body(20, log.proof(20, 30), log.note(30)))).status).toBe(200);
  });

  it('refuses a rewritten history signed with the log key (422), and a fork at the same size (409)', async () => {
    expect((await post(body(0, [], log.note(20)))).status).toBe(200);
    const rewritten = logTree(logKey, 'rewritten', 64);
    for (const proof of [rewritten.proof(20, 40), log.proof(20, 40)]) {
      const answer = await post(body(20, proof, rewritten.note(40)));
      expect(answer.status).toBe(422);
      expect(answer.text).toMatch(/^the consistency proof does not hold/);
    }
    const fork = await post(body(20, [], rewritten.note(20)));
    expect(fork).toMatchObject({ status: 409, text: '20\n' });
    // The refusals changed nothing: the true history still extends.
    expect((await post(body(20, log.proof(20, 40), log.note(40)))).status).toBe(200);
  });

  it('answers unknown origins 404, other keys 403, old sizes past the checkpoint and bad bodies 400', async () => {
    expect((await post(body(0, [], log.note(10, 'other.test/log')))).status).toBe(404);
    const impostor = logTree(generateSigningKey(ORIGIN), 'entry', 64);
    expect((await post(body(0, [], impostor.note(10)))).status).toBe(403);
    expect((await post(body(11, [], log.note(10)))).status).toBe(400);
    for (const bad of [
      '',
      'old 01\n\n',
      `old 0\nnot base64\n\n${log.note(5)}`,
      `old 0\n${log.note(5)}`,
      `old 0\n${'AAAA\n'.repeat(64)}\n${log.note(5)}`,
    ]) {
      expect((await post(bad)).status, JSON.stringify(bad.slice(0, 30))).toBe(400);
    }
    expect((await fetch(url)).status).toBe(405);
  });

  it('never rolls its state back when two requests race from the same old size', async () => {
    expect((await post(body(0, [], log.note(10)))).status).toBe(200);
    const answers = await Promise.all([
      post(body(10, log.proof(10, 50), log.note(50))),
      post(body(10, log.proof(10, 30), log.note(30))),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const winner = answers[0].status === 200 ? 50 : 30;
    const state = await WitnessState.open(join(dir, 'witness-state.json'));
    expect(state.latest(ORIGIN)?.size).toBe(winner);
    expect(answers.find((a) => a.status === 409)?.text).toBe(`${winner}\n`);
  });
});
