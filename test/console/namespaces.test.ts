import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  KEYS,
  removeDir,
  startArbiter,
  tempManifests,
  type ArbiterProcess,
} from '../support/arbiter-process.js';
import { teamGrantsYaml } from '../support/team-grants.js';
import { consoleSignedIn } from './support/browser.js';

/** The console's namespace column and filter, with decisions of namespaced actors and of a cluster actor. */
describe('the console: namespaces of decisions and audit entries', () => {
  let arbiter: ArbiterProcess;
  let manifestsDir: string;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    manifestsDir = await tempManifests();
    await writeFile(
      join(manifestsDir, 'team-grants.yaml'),
      teamGrantsYaml(['team-a/bot', 'team-b/bot'], 'database.query'),
    );
    arbiter = await startArbiter({ manifestsDir });
    for (const id of ['team-a/bot', 'team-b/bot', 'agent-001']) {
      const answer = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
        key: KEYS.admin,
        body: {
          actor: { id, type: id === 'agent-001' ? 'ai-agent' : 'automation' },
          action: { capability: 'database.query', parameters: { query: 'select 1' } },
        },
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      ids[id] = answer.body.decision_id;
    }
    ({ browser, page, errors } = await consoleSignedIn(arbiter.url, KEYS.auditor));
  });

  afterAll(async () => {
    await browser?.close();
    await arbiter?.stop();
    await removeDir(arbiter?.dataDir ?? '');
    await removeDir(manifestsDir ?? '');
  });

  it("shows each decision's namespace, and filters decisions by namespace", async () => {
    await page.getByRole('link', { name: 'Decisions' }).click();
    await page.getByText('Page 1 · 3 shown of 3').waitFor();
    const namespaceOf = (id: string) =>
      page.locator(`tr[data-decision-id="${id}"] td[data-column="namespace"]`).textContent();
    expect(await namespaceOf(ids['team-a/bot']!)).toBe('team-a');
    expect(await namespaceOf(ids['agent-001']!)).toBe('—');
    await page.getByLabel('Namespace', { exact: true }).fill('team-b');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Page 1 · 1 shown of 1').waitFor();
    expect(await page.locator('tr[data-decision-id]').getAttribute('data-decision-id')).toBe(
      ids['team-b/bot'],
    );
  });

  it('filters the audit log by namespace, with its column', async () => {
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByLabel('Event type').selectOption('governance.decision');
    await page.getByLabel('Namespace', { exact: true }).fill('team-a');
    await page.getByRole('button', { name: 'Apply' }).click();
    const rows = page.locator('tr[data-event-type="governance.decision"]');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(1);
    expect(await rows.first().locator('td[data-column="namespace"]').textContent()).toBe('team-a');
  });

  it('logged no error in the browser console', () => {
    expect(errors).toEqual([]);
  });
});
