import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  EXAMPLE_MANIFESTS,
  KEYS,
  removeDir,
  startArbiter,
  tempDir,
} from '../support/arbiter-process.js';
import { runArbiter } from './support/cli-run.js';

/** Writes to production: six, so that one change counts six decisions and lists five. */
const WRITES = [1, 2, 3, 4, 5, 6].map(
  (x) => ['database.write', { database: 'production', statement: `update t set x=${x}` }] as const,
);

const PROPOSALS = [
  ['database.query', { query: 'select 1' }], // under a rate-limited grant: counted apart
  WRITES[0]!,
  ['payments.transfer', { amount: 50000, currency: 'USD', to: 'acct-7' }],
  ['payments.transfer', { amount: 2000, currency: 'EUR', to: 'acct-7' }],
  ['deploy.production', { service: 'web', version: '1.2.3' }],
  ...WRITES.slice(1),
] as const;

/** An export made by a running embedded server, replayed against edited copies of its manifests. */
describe('arbiter replay', () => {
  let dir: string;
  let exportFile: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    dir = await tempDir('arbiter-replay-');
    const server = await startArbiter();
    try {
      for (const [capability, parameters] of PROPOSALS) {
        const res = await call(server.url, 'POST', '/api/v1/governance/propose', {
          key: KEYS.agent,
          body: { actor: { id: 'agent-001', type: 'ai-agent' }, action: { capability, parameters } },
        });
        expect(res.status).toBe(200);
        ids[`${capability} ${JSON.stringify(parameters)}`] = res.body.decision_id;
      }
      const exported = await call(server.url, 'GET', '/api/v1/audit/export', { key: KEYS.auditor });
      expect(exported.status).toBe(200);
      exportFile = join(dir, 'audit.jsonl');
      await writeFile(
        exportFile,
        typeof exported.body === 'string' ? exported.body : `${JSON.stringify(exported.body)}\n`,
      );
    } finally {
      await server.stop();
      await removeDir(server.dataDir);
      await removeDir(server.manifestsDir);
    }
  });
  afterAll(async () => {
    await removeDir(dir);
  });

  const edited = async (name: string, edit: (text: string) => string) => {
    const copy = join(dir, name);
    await cp(EXAMPLE_MANIFESTS, copy, { recursive: true });
    const policies = join(copy, 'policies.yaml');
    await writeFile(policies, edit(await readFile(policies, 'utf8')));
    return copy;
  };

  it('changes nothing under the configuration that made the decisions', async () => {
    const result = await runArbiter([
      'replay',
      exportFile,
      '--manifests',
      EXAMPLE_MANIFESTS,
      '--fail-on-loosen',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      'replayed 9 decision(s): 9 unchanged\nnot replayed: 1 depended on a rate limit, 0 on a review, 0 on masked parameters\n',
    );
  });

  it('prints the transition matrix with decision ids, and fails on a loosening when asked', async () => {
    const manifests = await edited('edited', (text) =>
      text
        .replace('parameters.amount > 10000', 'parameters.amount > 100000')
        .replace(
          "parameters.database == 'production'\", outcome: REQUIRE_CONFIRMATION",
          "parameters.database == 'production'\", outcome: DENY",
        ),
    );
    const transfer = ids[`payments.transfer ${JSON.stringify(PROPOSALS[2][1])}`];
    const writes = WRITES.map(
      ([capability, parameters]) => ids[`${capability} ${JSON.stringify(parameters)}`]!,
    );
    const result = await runArbiter(['replay', exportFile, '--manifests', manifests]);
    expect(result.code).toBe(0);
    // The most frequent change first; the ids of the first five decisions it changes.
    expect(result.stdout.split('\n')).toEqual([
      'replayed 9 decision(s): 2 unchanged',
      `REQUIRE_CONFIRMATION -> DENY: 6  ${writes.slice(0, 5).join(' ')}`,
      `DENY -> ALLOW: 1 (loosens)  ${transfer}`,
      'not replayed: 1 depended on a rate limit, 0 on a review, 0 on masked parameters',
      '',
    ]);
    expect(
      (await runArbiter(['replay', exportFile, '--manifests', manifests, '--fail-on-loosen'])).code,
    ).toBe(1);
    const json = JSON.parse(
      (await runArbiter(['replay', exportFile, '--manifests', manifests, '-o', 'json'])).stdout,
    );
    expect(json.transitions).toEqual([
      { from: 'REQUIRE_CONFIRMATION', to: 'DENY', count: 6, decisionIds: writes.slice(0, 5), loosens: false },
      { from: 'DENY', to: 'ALLOW', count: 1, decisionIds: [transfer], loosens: true },
    ]);
    expect(json.apart).toEqual({ rateLimited: 1, reviewed: 0, masked: 0 });
  });

  it('refuses invalid manifests and usage errors with exit 2', async () => {
    const broken = await edited('broken', (text) =>
      text.replace('parameters.amount > 10000', 'parameters.amount >'),
    );
    const invalid = await runArbiter(['replay', exportFile, '--manifests', broken]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/policies\.yaml:\d+: Policy\/payment-limits: InvalidCondition/);
    for (const args of [
      ['replay', exportFile],
      ['replay', '--manifests', broken],
      ['replay', join(dir, 'none.jsonl'), '--manifests', broken],
    ])
      expect((await runArbiter(args)).code).toBe(2);
  });
});
