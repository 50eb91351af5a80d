import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, CLI, KEYS, useArbiter } from '../support/arbiter-process.js';

const arbiter = useArbiter({ args: ['--checkpoint-entries', '5'] });

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
    const checkpoints = join(arbiter.dataDir, 'checkpoints.json');
    const good = await verifyCli(file, '--checkpoint', checkpoints);
    expect(good.code).toBe(0);
    expect(JSON.parse(good.stdout)).toMatchObject({ ok: true, entries_checked: lines.length });

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
