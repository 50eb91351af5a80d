import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatSigningKey, generateSigningKey } from '../../src/audit/note/note-keys.js';
import {
  call,
  KEYS,
  REPO,
  removeDir,
  startArbiter,
  tempDir,
  type ArbiterProcess,
} from '../support/arbiter-process.js';
import { collectErrors, launchChromium } from './support/browser.js';

/** Every view's screenshot lands here (gitignored); ARBITER_DOC_SCREENSHOTS=1 also refreshes docs/images. */
const SCREENSHOTS = join(REPO, 'reports/console-screenshots');
const DOC_IMAGES = join(REPO, 'docs/images');

const proposals = {
  confirmation: {
    capability: 'database.write',
    parameters: { database: 'production', statement: 'update t set x=1' },
  },
  escalate: { capability: 'deploy.production', parameters: { service: 'web', version: '1.2.3' } },
  deny: { capability: 'payments.transfer', parameters: { amount: 50000, currency: 'USD', to: 'acct-7' } },
  allow: { capability: 'database.query', parameters: { query: 'select 1' } },
};

async function propose(arbiter: ArbiterProcess, action: (typeof proposals)[keyof typeof proposals]) {
  const answer = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
    key: KEYS.agent,
    body: { actor: { id: 'agent-001', type: 'ai-agent' }, action },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as { decision_id: string; outcome: string };
}

describe('the browser console at /console/', () => {
  let arbiter: ArbiterProcess;
  let keysDir: string;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let approvedId: string;

  const screenshot = async (name: string, forDocs = false) => {
    await mkdir(SCREENSHOTS, { recursive: true });
    const file = join(SCREENSHOTS, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    if (forDocs && process.env.ARBITER_DOC_SCREENSHOTS === '1') {
      await mkdir(DOC_IMAGES, { recursive: true });
      await copyFile(file, join(DOC_IMAGES, `console-${name}.png`));
    }
  };

  const signIn = async (key: string) => {
    await page.goto(`${arbiter.url}/console/`);
    // A fresh sign-in: forget whoever was signed in before.
    await page.evaluate(() => sessionStorage.clear());
    await page.reload();
    await page.getByLabel('API key or bearer token').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  };

  beforeAll(async () => {
    keysDir = await tempDir('arbiter-console-keys-');
    await writeFile(
      join(keysDir, 'signing.key'),
      formatSigningKey(generateSigningKey('arbiter.test/console')),
      {
        mode: 0o600,
      },
    );
    // A signed checkpoint after every entry: each decision has its inclusion proof at once.
    arbiter = await startArbiter({
      args: ['--audit-signing-key', join(keysDir, 'signing.key'), '--checkpoint-entries', '1'],
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
    page.setDefaultTimeout(10_000);
    errors = collectErrors(page);
  });

  afterAll(async () => {
    await browser?.close();
    await arbiter?.stop();
    await removeDir(arbiter?.dataDir ?? '');
    await removeDir(arbiter?.manifestsDir ?? '');
    await removeDir(keysDir ?? '');
  });

  it('serves the console under a strict Content-Security-Policy, with no inline script', async () => {
    const response = await fetch(`${arbiter.url}/console/`);
    expect(response.status).toBe(200);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).toContain("connect-src 'self'");
    const html = await response.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
    const script = await fetch(`${arbiter.url}/console/app.js`);
    expect(script.headers.get('content-security-policy')).toBe(csp);
    expect(script.headers.get('content-type')).toContain('javascript');
    const bare = await fetch(`${arbiter.url}/console`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([301, '/console/']);
  });

  it('signs a reviewer in, shows a new pending decision without a reload, approves it and drops it from the queue', async () => {
    await signIn(KEYS.reviewer);
    // The reviewer key lacks audit:read: no audit views.
    const nav = page.getByRole('navigation', { name: 'Views' });
    await expect(nav.getByRole('link', { name: 'Pending reviews' }).isVisible()).resolves.toBe(true);
    expect(await nav.getByRole('link', { name: 'Audit log' }).count()).toBe(0);
    await page.getByText('No decision is waiting for review.').waitFor();

    // Signed in, a reload keeps the session (sessionStorage). How fast: npm run bench -- console.
    await page.reload();
    await page.getByText('No decision is waiting for review.').waitFor();
    // The queue follows the live pending stream; nothing polls it (pending.tsx).
    await page
      .getByRole('status')
      .filter({ hasText: /^live$/ })
      .waitFor();

    const decision = await propose(arbiter, proposals.confirmation);
    expect(decision.outcome).toBe('REQUIRE_CONFIRMATION');
    approvedId = decision.decision_id;
    const row = page.locator(`tr[data-decision-id="${approvedId}"]`);
    await row.waitFor({ timeout: 10_000 });
    await expect(row.textContent()).resolves.toMatch(/agent-001.*database\.write.*REQUIRE CONFIRMATION/);
    await screenshot('pending', true);

    await row.getByRole('button', { name: /^Approve/ }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Comment (optional)').fill('checked the statement');
    await dialog.getByRole('button', { name: 'Approve' }).click();
    const token = page.getByTestId('confirmation-token');
    await token.waitFor();
    expect((await token.textContent())?.length).toBeGreaterThan(10);
    await row.waitFor({ state: 'detached' });
    await screenshot('approved-token');

    const record = await call(arbiter.url, 'GET', `/api/v1/governance/decisions/${approvedId}`, {
      key: KEYS.admin,
    });
    expect(record.body.audit.status).toBe('approved');
    expect(record.body.audit.reviews[0]).toMatchObject({
      action: 'approve',
      reviewer: 'reviewer',
      comment: 'checked the statement',
    });
  });

  it('shows the approval in the audit log to an auditor, and new entries in the live tail', async () => {
    await signIn(KEYS.auditor);
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByLabel('Event type').selectOption('governance.review');
    await page.getByLabel('Decision id').fill(approvedId);
    await page.getByRole('button', { name: 'Apply' }).click();
    const review = page.locator('tr[data-event-type="governance.review"]');
    await review.first().waitFor();
    expect(await review.count()).toBe(1);
    await page.getByRole('button', { name: 'Clear' }).click();

    await page.getByLabel('Live tail').check();
    await page.getByRole('status').filter({ hasText: 'live' }).waitFor();
    const denied = await propose(arbiter, proposals.deny);
    await page.locator('tr.fresh', { hasText: denied.decision_id.slice(0, 8) }).waitFor({ timeout: 10_000 });
    await screenshot('audit-log');
  });

  it('shows a pending decision to an auditor as soon as the live queue reports it, without review buttons', async () => {
    await page.getByRole('link', { name: 'Pending reviews' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^live$/ })
      .waitFor();
    const escalated = await propose(arbiter, proposals.escalate);
    expect(escalated.outcome).toBe('ESCALATE');
    // The queue is never polled (pending.tsx): the row can only come by the stream.
    await page.locator(`tr[data-decision-id="${escalated.decision_id}"]`).waitFor({ timeout: 15_000 });
    // The auditor may not review: no Approve button.
    expect(await page.getByRole('button', { name: /^Approve/ }).count()).toBe(0);
  });

  it('filters decisions by actor and outcome and charts them per minute', async () => {
    await propose(arbiter, proposals.allow);
    await page.getByRole('link', { name: 'Decisions' }).click();
    await page.getByRole('heading', { name: 'Decisions' }).waitFor();
    await page.getByText('Page 1 · 4 shown of 4').waitFor();
    await page.getByLabel('Actor', { exact: true }).fill('agent-001');
    await page.getByLabel('Outcome', { exact: true }).selectOption('DENY');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Page 1 · 1 shown of 1').waitFor();
    const outcomes = await page.locator('tr[data-decision-id] .badge').first().textContent();
    expect(outcomes).toBe('DENY');
    await page.locator('.chart canvas').waitFor();
    await expect(page.locator('.chart figcaption').textContent()).resolves.toContain('DENY 1');
    await screenshot('decisions');
  });

  it('opens a trail: every stage, the reviews, and the inclusion proof checked in the browser', async () => {
    await page.goto(`${arbiter.url}/console/#/decisions/${approvedId}`);
    await page.getByRole('heading', { name: 'Evaluation' }).waitFor();
    await expect(page.getByText('Capability check:').isVisible()).resolves.toBe(true);
    await expect(page.getByText('Authority check:').isVisible()).resolves.toBe(true);
    await expect(page.locator('table', { hasText: 'prod-writes' }).isVisible()).resolves.toBe(true);
    await expect(page.getByText('"statement": "update t set x=1"').isVisible()).resolves.toBe(true);
    await expect(page.getByText('checked the statement').isVisible()).resolves.toBe(true);
    await expect(page.getByTestId('chain-verified').textContent()).resolves.toMatch(/^yes/);
    const proof = page.getByTestId('proof-result');
    await proof.waitFor();
    await expect(proof.textContent()).resolves.toContain('Inclusion proof verified in this browser');
    await screenshot('decision-detail', true);
  });

  it('says so when the server hands the browser a proof that does not lead to the checkpoint', async () => {
    await page.route('**/api/v1/audit/log/*', async (route) => {
      const response = await route.fetch();
      const trail = await response.json();
      const hashes: string[] = trail.integrity.inclusion_proof.hashes;
      // One flipped byte in the first hash of the path.
      hashes[0] = Buffer.from(
        Buffer.from(hashes[0]!, 'base64').map((b, i) => (i === 0 ? b ^ 1 : b)),
      ).toString('base64');
      await route.fulfill({ response, json: trail });
    });
    try {
      await page.goto(`${arbiter.url}/console/#/decisions/${approvedId}`);
      await page.reload();
      const proof = page.getByTestId('proof-result');
      await proof.waitFor();
      await expect(proof.textContent()).resolves.toContain('does not hold');
    } finally {
      await page.unrouteAll();
    }
  });

  it('shows the configuration and the integrity of the log', async () => {
    await page.goto(`${arbiter.url}/console/#/configuration`);
    await page.getByRole('table', { name: /Policies/ }).waitFor();
    await expect(page.locator('table', { hasText: 'payment-limits' }).isVisible()).resolves.toBe(true);
    await page.getByLabel('Actor id').fill('agent-001');
    await page.getByRole('button', { name: 'Show grants' }).click();
    await page.getByRole('table', { name: 'Grants of agent-001' }).waitFor();
    await screenshot('configuration');

    await page.getByRole('link', { name: 'Integrity' }).click();
    await expect(page.getByTestId('verify-result').textContent()).resolves.toContain('The chain holds.');
    await page.getByRole('table', { name: /Checkpoints/ }).waitFor();
    await expect(page.getByRole('table', { name: /Checkpoints/ }).textContent()).resolves.toContain(
      'arbiter.test/console',
    );
    await screenshot('integrity');
  });

  it('renders in dark mode and at 200 % zoom', async () => {
    const dark = await browser.newPage({
      viewport: { width: 640, height: 800 },
      deviceScaleFactor: 2,
      colorScheme: 'dark',
    });
    const darkErrors = collectErrors(dark);
    try {
      await dark.goto(`${arbiter.url}/console/`);
      await dark.getByLabel('API key or bearer token').fill(KEYS.admin);
      await dark.getByRole('button', { name: 'Sign in' }).click();
      await dark.getByRole('table').first().waitFor();
      const background = await dark.evaluate(() => getComputedStyle(document.body).backgroundColor);
      expect(background).toBe('rgb(15, 20, 25)');
      // Half the width at twice the scale, as 200 % zoom: nothing scrolls sideways but tables.
      const overflow = await dark.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      expect(overflow).toBeLessThanOrEqual(0);
      await dark.screenshot({ path: join(SCREENSHOTS, 'pending-dark-200.png'), fullPage: true });
      expect(darkErrors).toEqual([]);
    } finally {
      await dark.close();
    }
  });

  it('logged no error in the browser console', () => {
    expect(errors).toEqual([]);
  });
});
