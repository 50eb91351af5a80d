import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, CLI, KEYS, useArbiter } from '../support/arbiter-process.js';

const arbiter = useArbiter({ args: ['--checkpoint-entries', '5'] });

// An independent RFC 8785 implementation, to forge a chain that holds together by itself.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string;

/** Rewrites entry `seq` with `change` and re-seals every entry after it: a consistent forgery. */
function rewriteHistory(lines: string[], seq: number, change: (entry: any) => void): string[] {
  let previous: string | undefined;
  return lines.map((line) => {
    const entry = JSON.parse(line);
    if (entry.seq === seq) change(entry);
    if (entry.seq < seq) {
      previous = entry.hash;
      return line;
    }
    const { hash: _old, ...unsealed } = { ...entry, previous_hash: previous };
    const hash = `sha256:${createHash('sha256').update(canonicalize(unsealed)).digest('hex')}`;
    previous = hash;
    return canonicalize({ ...unsealed, hash });
  });
}

function verifyCli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, 'audit', 'verify', ...args], (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

describe('audit export and offline verification', () => {
  it('exports JSON Lines that `arbiter audit verify` accepts, and names the entry a changed byte breaks', async () => {
    for (let i = 0; i < 12; i += 1) {
      await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
        key: KEYS.agent,
        body: {
          actor: { id: 'agent-001', type: 'ai-agent' },
          action: { capability: 'database.query', parameters: { query: `q${i}` } },
        },
      });
    }
    const response = await fetch(`${arbiter.url}/api/v1/audit/export`, {
      headers: { authorization: `Bearer ${KEYS.auditor}` },
    });
    expect(response.headers.get('content-type')).toMatch(/application\/x-ndjson/);
    const text = await response.text();
    const lines = text.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(24);
    const file = join(arbiter.dataDir, 'export.jsonl');
    await writeFile(file, text);
    // A copy: the server may still add a checkpoint while the test reads this one.
    const checkpoints = join(arbiter.dataDir, 'checkpoints-copy.json');
    await copyFile(join(arbiter.dataDir, 'checkpoints.json'), checkpoints);
    const good = await verifyCli(file, '--checkpoint', checkpoints);
    expect(good.code).toBe(0);
    expect(JSON.parse(good.stdout)).toMatchObject({ ok: true, entries_checked: lines.length });
    // The checkpoints were used, not just read: every one in the file was checked.
    const stored = JSON.parse(await readFile(checkpoints, 'utf8'));
    const count = (Array.isArray(stored) ? stored : stored.checkpoints).length;
    expect(count).toBeGreaterThan(0);
    expect(JSON.parse(good.stdout).checkpoints_checked).toBe(count);

    // A rewritten history that re-seals every later entry holds together by itself; only the
    // checkpoints show that it is not the history that was recorded.
    const forged = rewriteHistory(lines, 3, (entry) => (entry.outcome = 'DENY'));
    await writeFile(file, `${forged.join('\n')}\n`);
    expect((await verifyCli(file)).code).toBe(0);
    const caught = await verifyCli(file, '--checkpoint', checkpoints);
    expect(caught.code).toBe(1);
    expect(JSON.parse(caught.stdout).break.reason).toMatch(/checkpoint/);

    const tampered = [...lines];
    tampered[15] = tampered[15]!.replace(/"query":"q(\d+)"/, '"query":"DROP TABLE"');
    expect(tampered[15]).not.toBe(lines[15]);
    await writeFile(file, `${tampered.join('\n')}\n`);
    const bad = await verifyCli(file, '--checkpoint', checkpoints);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout).break.seq).toBe(16);
    expect(bad.stderr).toMatch(/BROKEN at seq 16/);

    const usage = await verifyCli();
    expect(usage.code).toBe(2);
  });
});
