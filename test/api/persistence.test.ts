import { describe, expect, it } from 'vitest';
import { call, KEYS, removeDir, startArbiter } from '../support/arbiter-process.js';

describe('embedded mode persistence', () => {
  it('keeps API writes across a restart, and records each configuration change once', async () => {
    const first = await startArbiter();
    const { dataDir, manifestsDir } = first;
    const api = (base: string, method: string, path: string, body?: unknown) =>
      call(base, method, `/api/v1${path}`, { key: KEYS.admin, ...(body === undefined ? {} : { body }) });
    try {
      expect(
        (await api(first.url, 'POST', '/capabilities', { name: 'crm.export', risk_level: 'medium' })).status,
      ).toBe(201);
      expect(
        (
          await api(first.url, 'POST', '/policies', {
            name: 'crm-guard',
            rules: [{ capability: 'crm.export', outcome: 'ESCALATE' }],
          })
        ).status,
      ).toBe(201);
      expect(
        (await api(first.url, 'POST', '/actors/crm-bot/grants', { capability: 'crm.export' })).status,
      ).toBe(201);
      // A deleted policy stays deleted, and its deletion is not recorded again.
      await api(first.url, 'POST', '/policies', { name: 'crm-old', rules: [] });
      expect((await api(first.url, 'DELETE', '/policies/crm-old')).status).toBe(200);
      const configEvents = async (base: string) =>
        (await api(base, 'GET', '/audit/log?limit=200')).body.entries.filter(
          (e: { event_type: string }) => e.event_type !== 'governance.decision',
        ).length;
      const before = await configEvents(first.url);
      await first.stop();

      const second = await startArbiter({ dataDir, manifestsDir });
      try {
        const decision = await api(second.url, 'POST', '/governance/propose', {
          actor: { id: 'crm-bot', type: 'automation' },
          action: { capability: 'crm.export', parameters: {} },
        });
        expect(decision.body.outcome).toBe('ESCALATE');
        expect((await api(second.url, 'GET', '/policies/crm-guard')).status).toBe(200);
        expect((await api(second.url, 'GET', '/policies/crm-old')).status).toBe(404);
        expect(await configEvents(second.url)).toBe(before);
      } finally {
        await second.stop();
      }
    } finally {
      await removeDir(dataDir);
      await removeDir(manifestsDir);
    }
  });
});
