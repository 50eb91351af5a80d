import { execFile, execFileSync } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import {
  call,
  CLI,
  KEYS,
  removeDir,
  startArbiter,
  tempDir,
  tempManifests,
  type ArbiterProcess,
} from '../support/arbiter-process.js';

const run = promisify(execFile);
const TOKEN = 'tok-7f3a9c1e-never-store-me';
const MASK_KEY = 'test-mask-key-0123456789abcdef';

/** A capability whose token (and a nested password) the schema marks sensitive, granted to agent-001. */
const VAULT = `apiVersion: governance.arbiter.dev/v1alpha1
kind: Capability
metadata: {name: vault-read}
spec:
  name: vault.read
  riskLevel: medium
  parameterSchema:
    type: object
    required: [path, token]
    properties:
      path: {type: string}
      token: {type: string, x-arbiter-sensitive: true}
      login:
        type: object
        properties:
          user: {type: string}
          password: {type: string, x-arbiter-sensitive: true}
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: ActorGrant
metadata: {name: agent-001-vault}
spec:
  actor: {id: agent-001, type: ai-agent}
  grants: [{capability: vault.read}]
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: Policy
metadata: {name: vault-prod}
spec:
  enabled: true
  rules:
    - {capability: vault.read, condition: "parameters.path == 'prod'", outcome: REQUIRE_CONFIRMATION}
    # Reads the token: a condition on a masked value cannot be replayed.
    - {capability: vault.read, condition: "parameters.token.startsWith('revoked-')", outcome: DENY, priority: 10}
`;

/** Everything a user can get out of the server about the decisions made. */
async function everythingServed(arbiter: ArbiterProcess, ids: string[]): Promise<string> {
  const answers: unknown[] = [];
  const get = async (path: string, key: string) => {
    const res = await call(arbiter.url, 'GET', path, { key });
    expect(res.status, path).toBe(200);
    answers.push(res.body);
  };
  for (const id of ids) {
    await get(`/api/v1/governance/decisions/${id}`, KEYS.reviewer);
    await get(`/api/v1/audit/log/${id}`, KEYS.auditor);
  }
  await get('/api/v1/governance/decisions?limit=100', KEYS.reviewer);
  await get('/api/v1/governance/pending', KEYS.reviewer);
  await get('/api/v1/audit/log?limit=100', KEYS.auditor);
  await get('/api/v1/audit/export', KEYS.auditor);
  return JSON.stringify(answers);
}

async function proposeVault(arbiter: ArbiterProcess, path: string, extra: object = {}) {
  const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
    key: KEYS.agent,
    body: {
      actor: { id: 'agent-001', type: 'ai-agent' },
      action: {
        capability: 'vault.read',
        parameters: { path, token: TOKEN, login: { user: 'ada', password: `pw-${TOKEN}` }, ...extra },
      },
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(JSON.stringify(res.body)).not.toContain(TOKEN);
  return res.body as { decision_id: string; outcome: string };
}

let keyDir: string;
beforeAll(async () => {
  keyDir = await tempDir('arbiter-mask-key-');
  await writeFile(join(keyDir, 'mask.key'), `${MASK_KEY}\n`, { mode: 0o600 });
});
afterAll(() => removeDir(keyDir));

describe.each(['file', 'redis'] as const)('sensitive parameters, %s audit', (backend) => {
  let arbiter: ArbiterProcess;
  let redis: RedisServer | undefined;

  beforeAll(async () => {
    const manifestsDir = await tempManifests();
    await writeFile(join(manifestsDir, 'vault.yaml'), VAULT);
    redis = backend === 'redis' ? await startRedisServer() : undefined;
    arbiter = await startArbiter({
      manifestsDir,
      args: [
        '--audit-mask-key',
        join(keyDir, 'mask.key'),
        '--log-level',
        'debug',
        ...(redis ? ['--redis', `${redis.url}/0`] : []),
      ],
    });
  }, 30_000);
  afterAll(async () => {
    await arbiter.stop();
    await redis?.dispose();
    await removeDir(arbiter.dataDir);
    await removeDir(arbiter.manifestsDir);
  });

  it('decides on the real token, and it appears nowhere: not stored, served, exported or logged', async () => {
    const allowed = await proposeVault(arbiter, 'dev');
    expect(allowed.outcome).toBe('ALLOW');
    const waiting = await proposeVault(arbiter, 'prod');
    expect(waiting.outcome).toBe('REQUIRE_CONFIRMATION');
    // The DENY rule reads the real token: a revoked one is refused though it is masked.
    const revoked = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      key: KEYS.agent,
      body: {
        actor: { id: 'agent-001', type: 'ai-agent' },
        action: { capability: 'vault.read', parameters: { path: 'dev', token: `revoked-${TOKEN}` } },
      },
    });
    expect(revoked.body.outcome).toBe('DENY');
    const approval = await call(
      arbiter.url,
      'POST',
      `/api/v1/governance/decisions/${waiting.decision_id}/approve`,
      {
        key: KEYS.reviewer,
        body: {},
      },
    );
    expect(approval.status).toBe(200);

    const served = await everythingServed(arbiter, [
      allowed.decision_id,
      waiting.decision_id,
      revoked.body.decision_id,
    ]);
    expect(served).not.toContain(TOKEN);
    // What stands in its place: the HMAC of its canonical JSON under the key, as openssl computes it.
    const hmac = execFileSync('openssl', ['dgst', '-sha256', '-hmac', MASK_KEY, '-r'], {
      input: `"${TOKEN}"`,
    })
      .toString()
      .split(' ')[0];
    expect(served).toContain(`"token":{"masked":"hmac-sha256:${hmac}"}`);
    expect(served).toContain('"user":"ada"');
    expect(arbiter.logs.join('\n')).not.toContain(TOKEN);

    // Replay cannot re-decide on a masked token that a condition reads: counted apart, not guessed.
    const exportFile = join(keyDir, `export-${backend}.jsonl`);
    const exported = await call(arbiter.url, 'GET', '/api/v1/audit/export', { key: KEYS.auditor });
    await writeFile(exportFile, exported.body as string);
    const replay = await run(process.execPath, [
      CLI,
      'replay',
      exportFile,
      '--manifests',
      arbiter.manifestsDir,
      '-o',
      'json',
    ]);
    const report = JSON.parse(replay.stdout);
    expect(report.apart.masked).toBe(3);
    expect(report.replayed).toBe(0);

    if (backend === 'file') {
      const files = await readdir(arbiter.dataDir, { recursive: true });
      for (const file of files) {
        const text = await readFile(join(arbiter.dataDir, file)).catch(() => Buffer.alloc(0));
        expect(text.includes(TOKEN), file).toBe(false);
      }
    } else {
      let streams = 0;
      const keys = (await run('redis-cli', ['-u', `${redis!.url}/0`, '--scan'])).stdout
        .split('\n')
        .filter(Boolean);
      for (const key of keys) {
        const type = (await run('redis-cli', ['-u', `${redis!.url}/0`, 'TYPE', key])).stdout.trim();
        const read = {
          stream: ['XRANGE', key, '-', '+'],
          hash: ['HGETALL', key],
          string: ['GET', key],
          zset: ['ZRANGE', key, '0', '-1'],
        }[type];
        if (!read) continue;
        if (type === 'stream') streams += 1;
        const value = (await run('redis-cli', ['-u', `${redis!.url}/0`, ...read])).stdout;
        expect(value.includes(TOKEN), key).toBe(false);
      }
      expect(streams).toBeGreaterThan(0);
    }
  });
});

describe('--audit-mask-key', () => {
  it('refuses to start with a key file it cannot read, or a key too short, naming the file', async () => {
    await expect(startArbiter({ args: ['--audit-mask-key', join(keyDir, 'missing.key')] })).rejects.toThrow(
      `--audit-mask-key ${join(keyDir, 'missing.key')}: no such file or directory`,
    );
    await writeFile(join(keyDir, 'short.key'), 'short\n');
    await expect(startArbiter({ args: ['--audit-mask-key', join(keyDir, 'short.key')] })).rejects.toThrow(
      `--audit-mask-key ${join(keyDir, 'short.key')}: the key has 5 bytes, at least 16 are needed`,
    );
  });
});
