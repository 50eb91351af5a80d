import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, KEYS, useArbiter } from '../support/arbiter-process.js';

const arbiter = useArbiter();
const policies = () => call(arbiter.url, 'GET', '/api/v1/policies', { key: KEYS.admin });

async function eventually<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await probe();
  while (!accept(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    value = await probe();
  }
  return value;
}

describe('manifests folder', () => {
  it('reloads a changed file, audits the change, and keeps the last good state of a broken file', async () => {
    const file = join(arbiter.manifestsDir, 'extra.yml');
    await writeFile(
      file,
      'apiVersion: governance.arbiter.dev/v1alpha1\nkind: Policy\nmetadata: {name: extra}\nspec:\n  rules:\n    - {capability: email.send, outcome: DENY, priority: 5}\n',
    );
    const loaded = await eventually(policies, (r) =>
      r.body.policies.some((p: { name: string }) => p.name === 'extra'),
    );
    expect(loaded.body.policies.some((p: { name: string }) => p.name === 'extra')).toBe(true);

    await writeFile(
      file,
      'apiVersion: governance.arbiter.dev/v1alpha1\nkind: Policy\nmetadata: {name: extra\nspec: [',
    );
    // Wait for the broken version to have been read (readiness counts the problem), so that
    // what follows checks the state after the reload, not before it.
    const readiness = await eventually(
      () => call(arbiter.url, 'GET', '/readyz'),
      (r) => JSON.stringify(r.body).includes('1 manifest problem(s)'),
    );
    expect(JSON.stringify(readiness.body)).toContain('1 manifest problem(s)');
    const kept = await policies();
    expect(kept.body.policies.some((p: { name: string }) => p.name === 'extra')).toBe(true);
    expect(arbiter.logs.some((l) => l.includes('extra.yml'))).toBe(true);

    const grants = join(arbiter.manifestsDir, 'grants.yaml');
    await writeFile(
      grants,
      (await readFile(grants, 'utf8')).replace('    - capability: deploy.production\n', ''),
    );
    const revoked = await eventually(
      () => call(arbiter.url, 'GET', '/api/v1/audit/log?event_type=actor.grant.revoked', { key: KEYS.admin }),
      (r) => r.body.total > 0,
    );
    expect(revoked.body.entries[0]).toMatchObject({ actor_id: 'agent-001', capability: 'deploy.production' });
  });
});

describe('CLI', () => {
  it('prints help, and refuses a wrong command line with one line and exit 2', async () => {
    const { execFile } = await import('node:child_process');
    const { CLI } = await import('../support/arbiter-process.js');
    const run = (args: string[]) =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        execFile(process.execPath, [CLI, ...args], (error, out, err) =>
          resolve({ code: error ? (error.code as number) : 0, out, err }),
        );
      });
    const help = await run(['serve', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/--manifests DIR/);
    const missing = await run(['serve']);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/--api-keys/);
    const unknown = await run(['frobnicate']);
    expect(unknown.code).toBe(2);
    const keys = ['serve', '--api-keys', 'examples/api-keys.yaml'];
    const outcome = await run([...keys, '--default-outcome', 'MAYBE']);
    expect(outcome.code).toBe(2);
    expect(outcome.err).toMatch(/--default-outcome must be ALLOW or DENY/);
    const timeout = await run([...keys, '--redis', 'redis://127.0.0.1:1', '--redis-timeout', '0']);
    expect(timeout.code).toBe(2);
    expect(timeout.err).toMatch(/--redis-timeout/);
    const scheme = await run([...keys, '--redis', 'http://127.0.0.1:1']);
    expect(scheme.code).toBe(2);
    expect(scheme.err).toMatch(
      /"http:\/\/127.0.0.1:1" is neither redis:\/\/HOST:PORT\/DB nor redis\+sentinel:\/\//,
    );
  });
});
