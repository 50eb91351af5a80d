import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { frontierRoot, appendLeaf, EMPTY_FRONTIER } from '../../src/audit/merkle/tree-frontier.js';
import { leafHash } from '../../src/audit/merkle/tree-hash.js';
import { formatCheckpoint } from '../../src/audit/note/checkpoint-note.js';
import {
  formatSigningKey,
  formatVerifierKey,
  generateSigningKey,
  parseVerifierKey,
} from '../../src/audit/note/note-keys.js';
import { openNote, signNote } from '../../src/audit/note/signed-note.js';
import { CLI } from '../support/arbiter-process.js';
import { runArbiter, useFixtureDir } from './support/cli-run.js';

describe('arbiter witness', () => {
  const fixtures = useFixtureDir('arbiter-witness-cli-');

  it('cosigns a checkpoint of a log it knows, with the key arbiter audit keygen --witness made, and stops on SIGTERM', async () => {
    const keygen = await runArbiter([
      'audit',
      'keygen',
      '--witness',
      '--origin',
      'witness.test/w1',
      '--out',
      fixtures.path('w1.key'),
    ]);
    expect(keygen.code, keygen.stderr).toBe(0);
    const witnessVkey = parseVerifierKey(keygen.stdout.trim());
    const logKey = generateSigningKey('arbiter.test/audit');
    await writeFile(fixtures.path('log.vkey'), formatVerifierKey(logKey));
    const child = spawn(process.execPath, [
      CLI,
      'witness',
      '--log-vkey',
      fixtures.path('log.vkey'),
      '--key',
      fixtures.path('w1.key'),
      '--state',
      fixtures.path('state.json'),
      '--port',
      '0',
      '--host',
      '127.0.0.1',
    ]);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const listening = await new Promise<{ port: number; vkey: string }>((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        const record = JSON.parse(line) as { msg: string; port: number; vkey: string };
        if (record.msg === 'witness listening') resolve(record);
      });
      void exited.then((code) => reject(new Error(`witness exited with ${code}`)));
    });
    expect(listening.vkey).toBe(keygen.stdout.trim());
    const frontier = [0, 1, 2].reduce(
      (f, i) => appendLeaf(f, leafHash(`entry ${i}`)).frontier,
      EMPTY_FRONTIER,
    );
    const note = signNote(
      formatCheckpoint({ origin: 'arbiter.test/audit', size: 3, root: frontierRoot(frontier) }),
      [logKey],
    );
    const response = await fetch(`http://127.0.0.1:${listening.port}/add-checkpoint`, {
      method: 'POST',
      body: `old 0\n\n${note}`,
    });
    expect(response.status).toBe(200);
    expect(openNote(`${note}${await response.text()}`, [witnessVkey]).verified).toHaveLength(1);
    expect(
      JSON.parse(await readFile(fixtures.path('state.json'), 'utf8')).logs['arbiter.test/audit'].size,
    ).toBe(3);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('refuses a log signing key as its own key, and explains its usage', async () => {
    await writeFile(fixtures.path('log.key'), formatSigningKey(generateSigningKey('arbiter.test/audit')));
    const wrong = await runArbiter([
      'witness',
      '--log-vkey',
      formatVerifierKey(generateSigningKey('a.test/log')),
      '--key',
      fixtures.path('log.key'),
      '--state',
      fixtures.path('s.json'),
    ]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain(
      'is a log signing key; make a witness key with arbiter audit keygen --witness',
    );
    const usage = await runArbiter(['witness']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe(
      'arbiter witness: --log-vkey, --key and --state are required (see arbiter witness --help)\n',
    );
  });
});
