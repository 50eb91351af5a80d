import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startRedisServer } from '../env/redis-server.js';
import { runArbiter } from '../cli/support/cli-run.js';
import { checkpointedUpTo } from '../support/audit-checkpoints.js';
import { call, KEYS, removeDir, startArbiter, tempDir, tempManifests } from '../support/arbiter-process.js';

const propose = (url: string, query: string) =>
  call(url, 'POST', '/api/v1/governance/propose', {
    key: KEYS.agent,
    body: {
      actor: { id: 'agent-001', type: 'ai-agent' },
      action: { capability: 'database.query', parameters: { query } },
    },
  });

describe('archiving the Redis audit log while replicas serve it', () => {
  it('through the API of a replica with an archive folder, then with the CLI: replicas go on, nothing is lost', async () => {
    const redis = await startRedisServer();
    const manifestsDir = await tempManifests();
    const archives = await tempDir('arbiter-archives-');
    const common = ['--redis', `${redis.url}/0`, '--checkpoint-entries', '5'];
    const a = await startArbiter({ manifestsDir, args: [...common, '--audit-archive-dir', archives] });
    const b = await startArbiter({ manifestsDir, args: common });
    try {
      for (let i = 0; i < 12; i += 1)
        expect((await propose(i % 2 ? a.url : b.url, `q${i}`)).status).toBe(200);
      await checkpointedUpTo(a.url, 10);

      // b has no archive folder: it says so instead of writing to its ephemeral disk.
      const refused = await call(b.url, 'POST', '/api/v1/audit/archive', {
        key: KEYS.admin,
        body: { before: new Date().toISOString() },
      });
      expect(refused.status).toBe(409);
      expect((refused.body as { error: { message: string } }).error.message).toMatch(/--audit-archive-dir/);

      const first = await call(a.url, 'POST', '/api/v1/audit/archive', {
        key: KEYS.admin,
        body: { before: new Date().toISOString() },
      });
      expect(first.status).toBe(200);
      const result = first.body as {
        archive: { file: string; to_seq: number };
        retained: { from_seq: number };
      };
      expect(result.retained.from_seq).toBe(result.archive.to_seq + 1);
      // Both replicas serve the retained range from the one Redis.
      for (const url of [a.url, b.url]) {
        const log = await call(url, 'GET', '/api/v1/audit/log?limit=5', { key: KEYS.auditor });
        expect(log.body).toMatchObject({ retained: result.retained, partial: true });
        expect((log.body as { entries: { seq: number }[] }).entries[0]!.seq).toBe(result.retained.from_seq);
      }

      // More decisions on both, then the CLI archives again while both keep serving.
      const during = Promise.all(
        Array.from({ length: 20 }, (_, i) => propose(i % 2 ? a.url : b.url, `d${i}`)),
      );
      await checkpointedUpTo(a.url, result.archive.to_seq + 5);
      const cli = await runArbiter([
        'audit',
        'archive',
        '--redis',
        `${redis.url}/0`,
        '--data-dir',
        a.dataDir,
        '--before',
        new Date().toISOString(),
        '--out',
        `${archives}/`,
      ]);
      expect(cli.code, cli.stderr).toBe(0);
      expect((await during).every((r) => r.status === 200)).toBe(true);
      const second = JSON.parse(cli.stdout) as { archive: { file: string; from_seq: number } };
      expect(second.archive.from_seq).toBe(result.archive.to_seq + 1);

      for (const url of [a.url, b.url]) {
        const verify = await call(url, 'GET', '/api/v1/audit/verify', { key: KEYS.auditor });
        expect(verify.body).toMatchObject({
          ok: true,
          retained: { anchor: { archive: second.archive.file } },
        });
      }
      // Archives and an export of the rest: one chain from genesis, every decision in it.
      const exported = await fetch(`${b.url}/api/v1/audit/export`, {
        headers: { authorization: `Bearer ${KEYS.auditor}` },
      });
      const exportFile = join(archives, 'retained-export.jsonl');
      await writeFile(exportFile, await exported.text());
      const files = (await readdir(archives)).filter((f) => f.startsWith('audit-')).sort();
      expect(files).toEqual([result.archive.file, second.archive.file]);
      const offline = await runArbiter([
        'audit',
        'verify',
        ...files.map((f) => join(archives, f)),
        exportFile,
      ]);
      expect(offline.code, offline.stderr).toBe(0);
      expect(JSON.parse(offline.stdout)).toMatchObject({ ok: true, start: { trusted: 'genesis' } });
      const decisions = (JSON.parse(offline.stdout) as { entries_checked: number }).entries_checked;
      expect(decisions).toBeGreaterThanOrEqual(32 + 2);
    } finally {
      await a.stop();
      await b.stop();
      await redis.dispose();
      for (const dir of [a.dataDir, b.dataDir, manifestsDir, archives]) await removeDir(dir);
    }
  });
});
