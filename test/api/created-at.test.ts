import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { eventually } from '../operator/support/operator-env.js';
import { call, KEYS, removeDir, startArbiter } from '../support/arbiter-process.js';

const createdAt = async (url: string) => {
  const res = await call(url, 'GET', '/api/v1/capabilities?limit=200', { key: KEYS.admin });
  expect(res.status).toBe(200);
  return Object.fromEntries(
    (res.body.capabilities as Array<{ name: string; created_at: string | null }>).map((c) => [
      c.name,
      c.created_at,
    ]),
  );
};

describe('created_at of manifest objects (embedded mode)', () => {
  it('is the time the object was first seen, kept across restarts; a later object gets a later time', async () => {
    const first = await startArbiter();
    let times: Record<string, string | null>;
    try {
      times = await createdAt(first.url);
      expect(Object.values(times).length).toBeGreaterThan(0);
      for (const time of Object.values(times))
        expect(time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // "Later" in milliseconds: let the clock pass the newest time before the next object comes.
      const newest = Math.max(...Object.values(times).map((t) => Date.parse(t!)));
      await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(newest));
      await writeFile(
        join(first.manifestsDir, 'later.yaml'),
        'apiVersion: governance.arbiter.dev/v1alpha1\nkind: Capability\nmetadata: {name: tickets-create}\nspec: {name: tickets.create, riskLevel: low}\n',
      );
      const later = await eventually(
        'the new manifest to load',
        async () => (await createdAt(first.url))['tickets.create'] ?? undefined,
      );
      expect(Date.parse(later.value)).toBeGreaterThan(newest);
      times['tickets.create'] = later.value;
    } finally {
      await first.stop();
    }
    const again = await startArbiter({ dataDir: first.dataDir, manifestsDir: first.manifestsDir });
    try {
      expect(await createdAt(again.url)).toEqual(times);
    } finally {
      await again.stop();
      await removeDir(first.dataDir);
      await removeDir(first.manifestsDir);
    }
  });
});
