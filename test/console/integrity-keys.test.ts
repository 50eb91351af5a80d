import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatVerifierKey, generateSigningKey } from '../../src/audit/note/note-keys.js';
import {
  call,
  KEYS,
  removeDir,
  startArbiter,
  tempDir,
  type ArbiterProcess,
} from '../support/arbiter-process.js';
import { keygenWitness, type KeygenWitness } from '../support/keygen-witness.js';
import { consoleSignedIn } from './support/browser.js';

const ORIGIN = 'arbiter.test/console-keys';
const WITNESS = 'witness.security.example.com';

/**
 * Which names the console calls verified: a log signed and a real witness cosigned every
 * checkpoint, with keys from `arbiter audit keygen`; the browser may say "verified" only
 * for a name whose key the user trusts and whose signature checked, and a witness's
 * cosignature never for the log's signature.
 */
describe('the console says which checkpoint signatures it verified, and with what kind of key', () => {
  let dir: string;
  let keys: KeygenWitness;
  let arbiter: ArbiterProcess;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let logVkey: string;
  let witnessVkey: string;
  let decisionId: string;

  beforeAll(async () => {
    dir = await tempDir('arbiter-console-key-roles-');
    keys = await keygenWitness(dir, ORIGIN, WITNESS);
    ({ logVkey, witnessVkey } = keys);
    arbiter = await startArbiter({
      args: [
        '--audit-signing-key',
        keys.logKeyFile,
        '--checkpoint-entries',
        '1',
        '--witness',
        keys.witnessUrl,
        '--witness-vkey',
        witnessVkey,
      ],
    });
    const answer = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      key: KEYS.agent,
      body: {
        actor: { id: 'agent-001', type: 'ai-agent' },
        action: { capability: 'database.query', parameters: { query: 'select 1' } },
      },
    });
    expect(answer.status).toBe(200);
    decisionId = answer.body.decision_id;
    ({ browser, page, errors } = await consoleSignedIn(arbiter.url, KEYS.auditor));
  });

  afterAll(async () => {
    await browser?.close();
    await arbiter?.stop();
    await keys?.close();
    await removeDir(arbiter?.dataDir ?? '');
    await removeDir(arbiter?.manifestsDir ?? '');
    await removeDir(dir ?? '');
  });

  const checkpoints = () => page.getByRole('table', { name: /Checkpoints/ });

  /** The newest checkpoint's signature cell, once the browser has checked it. */
  async function newestSignatures(): Promise<string> {
    const cell = checkpoints().locator('tbody tr').first().locator('[data-testid="signatures"]');
    await cell.locator('ul.signatures').waitFor(); // checked with the keys now trusted (a new check per set of keys)
    return (await cell.textContent()) ?? '';
  }

  async function trust(keys: string[]) {
    await page.goto(`${arbiter.url}/console/#/integrity`);
    await page.getByLabel(/Verifier keys you trust/).fill(keys.join('\n'));
    await page.getByRole('button', { name: 'Save keys' }).click();
    await page.getByText(`Saved ${keys.length} key(s) in this browser.`).waitFor();
  }

  async function proofResult(): Promise<string> {
    await page.goto(`${arbiter.url}/console/#/decisions/${decisionId}`);
    await page.reload(); // the trusted keys are read when the proof is checked
    const proof = page.getByTestId('proof-result');
    await proof.waitFor();
    return (await proof.textContent()) ?? '';
  }

  it('labels the signers it has no trusted key for as not verified, and calls nothing verified', async () => {
    await page.goto(`${arbiter.url}/console/#/integrity`);
    await checkpoints().waitFor();
    const headers = await checkpoints().locator('th').allTextContents();
    expect(headers).toContain('Signatures (not verified: no key trusted)');
    expect(headers).not.toContain('Signed by');
    const cell = await newestSignatures();
    expect(cell).toContain(`${ORIGIN}: not verified`);
    expect(cell).toContain(`${WITNESS}: not verified`);
    expect(cell).not.toMatch(/(?<!not )verified/);
    const proof = await proofResult();
    expect(proof).toContain(`Checkpoint signatures (${ORIGIN}, ${WITNESS}) not verified: no key trusted.`);
  });

  it("never takes a witness's cosignature for the log's signature: only the witness key trusted", async () => {
    await trust([witnessVkey]);
    expect(await checkpoints().locator('th').allTextContents()).toContain(
      'Signatures (checked with your trusted keys)',
    );
    const cell = await newestSignatures();
    expect(cell).toContain(`${WITNESS}: witness cosignature verified`);
    expect(cell).toContain(`${ORIGIN}: not verified`);
    expect(cell).not.toContain('log signature verified');
    const proof = await proofResult();
    expect(proof).toContain(
      "The log's signature is not verified: no log key (type 0x01) you trust signed this checkpoint.",
    );
    expect(proof).toContain(`Witness cosignatures verified: ${WITNESS}.`);
    expect(proof).not.toMatch(/signatures verified for/);
  });

  it("says the log's signature verified once the log key is trusted, and not for a key of the log's name that did not sign", async () => {
    const impostor = formatVerifierKey(generateSigningKey(ORIGIN));
    await trust([impostor]);
    expect(await newestSignatures()).toContain(`${ORIGIN}: not verified`);
    expect(await proofResult()).toContain("The log's signature is not verified");

    await trust([logVkey, witnessVkey]);
    const cell = await newestSignatures();
    expect(cell).toContain(`${ORIGIN}: log signature verified`);
    expect(cell).toContain(`${WITNESS}: witness cosignature verified`);
    const proof = await proofResult();
    expect(proof).toContain(`The log's signature verified: ${ORIGIN}.`);
    expect(proof).toContain(`Witness cosignatures verified: ${WITNESS}.`);
  });

  it('logged no error in the browser console', () => {
    expect(errors).toEqual([]);
  });
});
