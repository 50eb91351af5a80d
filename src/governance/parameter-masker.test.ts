import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AUDIT_LOG_FILE } from '../audit/file/file-audit-log.js';
import { afterEach, describe, expect, it } from 'vitest';
import { capability, grant, policy, proposal } from '../engine/test-fixtures.js';
import { buildIndex } from '../index/index.js';
import type { EngineDecision } from '../model/index.js';
import { ParameterMasker } from './parameter-masker.js';
import { serviceOnTempLog, type ServiceOnTempLog } from './test-decision-service.js';

const KEY = 'a-mask-key-of-32-bytes-0123456789';
const index = buildIndex([
  capability('vault.read', {
    parameterSchema: {
      type: 'object',
      properties: { path: { type: 'string' }, token: { type: 'string', 'x-arbiter-sensitive': true } },
    },
  }),
  capability('files.read'),
  grant('agent-1', 'agent-1', [{ capability: 'vault.read' }, { capability: 'files.read' }]),
  // A condition that fails on the token's value, quoting it in its error.
  policy('token-format', [
    { capability: 'vault.read', condition: 'int(parameters.token) > 100', outcome: 'DENY', priority: 5 },
    // Errs on a token that is no number, quoting it: counts as matching, and wins by priority.
    {
      capability: 'vault.read',
      condition: 'int(parameters.token) < 0',
      outcome: 'REQUIRE_CONFIRMATION',
      priority: 10,
    },
  ]),
]);
const masker = new ParameterMasker(Buffer.from(KEY), { current: () => index });

/** The HMAC as openssl computes it: an independent reference. */
function opensslHmac(text: string, key: string): string {
  return execFileSync('openssl', ['dgst', '-sha256', '-hmac', key, '-r'], { input: text })
    .toString()
    .split(' ')[0]!;
}

describe('ParameterMasker', () => {
  it('masks a sensitive value as the HMAC-SHA256 of its canonical JSON, as openssl computes it', () => {
    const masked = masker.maskProposal(proposal('vault.read', { path: 'p', token: 's3cr3t-token' }));
    expect(masked.action.parameters).toEqual({
      path: 'p',
      token: { masked: `hmac-sha256:${opensslHmac('"s3cr3t-token"', KEY)}` },
    });
    expect(masker.maskValue({ b: 1, a: [2] })).toEqual({
      masked: `hmac-sha256:${opensslHmac('{"a":[2],"b":1}', KEY)}`,
    });
  });

  it('gives equal values equal masks, and another key other masks', () => {
    const other = new ParameterMasker(Buffer.from(`${KEY}-other`), { current: () => index });
    expect(masker.maskValue('x')).toEqual(masker.maskValue('x'));
    expect(masker.maskValue('x')).not.toEqual(masker.maskValue('y'));
    expect(other.maskValue('x')).not.toEqual(masker.maskValue('x'));
  });

  it('leaves a proposal whose capability marks nothing, or is unknown, as it is', () => {
    const plain = proposal('files.read', { token: 'visible' });
    expect(masker.maskProposal(plain)).toBe(plain);
    const unknown = proposal('nothing.here', { token: 'visible' });
    expect(masker.maskProposal(unknown)).toBe(unknown);
  });

  it('keys the fingerprints of requests with sensitive parameters only', () => {
    expect(masker.recordedFingerprint('abc', 'files.read')).toBe('abc');
    expect(masker.recordedFingerprint('abc', 'vault.read')).toBe(opensslHmac('fingerprint:abc', KEY));
  });

  it('refuses a key shorter than 128 bits', () => {
    expect(() => new ParameterMasker(Buffer.from('short'), { current: () => index })).toThrow(
      'the mask key has 5 bytes; it needs at least 16',
    );
  });

  it('scrubs sensitive values from a text about the proposal (a tool result summary)', () => {
    const p = proposal('vault.read', { path: 'p', token: 'tok"en-1' });
    expect(masker.scrubText(p, 'read p with tok"en-1 twice: tok"en-1')).toBe(
      'read p with [masked] twice: [masked]',
    );
    expect(masker.scrubText(proposal('files.read', { token: 'visible' }), 'visible')).toBe('visible');
  });

  it('scrubs a sensitive value a message quotes, and leaves short ones', () => {
    const p = proposal('vault.read', { path: 'p', token: 'tok"en-1' });
    const decided = {
      reason: 'condition failed on tok"en-1',
      evaluation: { rules_evaluated: [{ error: 'no such overload: tok"en-1' }] },
    } as unknown as EngineDecision;
    expect(masker.scrubDecision(p, decided)).toMatchObject({
      reason: 'condition failed on [masked]',
      evaluation: { rules_evaluated: [{ error: 'no such overload: [masked]' }] },
    });
    const short = proposal('vault.read', { path: 'p', token: 'ab1' });
    const mentioning = { reason: 'rule ab1', evaluation: {} } as unknown as EngineDecision;
    expect(masker.scrubDecision(short, mentioning)).toBe(mentioning);
  });
});

describe('a DecisionService with a masker', () => {
  let context: ServiceOnTempLog | undefined;
  afterEach(() => context?.close());
  const now = new Date('2026-11-23T12:00:00Z');

  it('decides on the real values and records, answers and redeems with masked ones', async () => {
    context = await serviceOnTempLog(
      () => index,
      () => now,
      { masker },
    );
    const { service, dir } = context;
    const logText = () => readFile(join(dir, AUDIT_LOG_FILE), 'utf8');
    const asked = proposal('vault.read', { path: 'prod', token: '12345678' }, { type: 'ai-agent' });
    const decision = await service.propose(asked, 'agent-key');
    // The real value decided: int("12345678") > 100, so the DENY rule matched.
    expect(decision.outcome).toBe('DENY');
    const text = await logText();
    expect(text).not.toContain('12345678');
    expect(text).toContain('"masked":"hmac-sha256:');

    // A token that fails the condition (an error quoting it), then a confirmation.
    const odd = proposal('vault.read', { path: 'prod', token: 'not-a-number' }, { type: 'ai-agent' });
    const pending = await service.propose(odd, 'agent-key');
    expect(pending.outcome).toBe('REQUIRE_CONFIRMATION');
    expect(JSON.stringify(await service.get(pending.decision_id))).not.toContain('not-a-number');
    const { confirmation_token } = await service.review(pending.decision_id, 'approve', 'reviewer');
    // The same token for other (masked) values is not valid.
    const other = proposal('vault.read', { path: 'prod', token: 'another-one' }, { type: 'ai-agent' });
    await expect(
      service.propose({ ...other, context: { confirmation_token: confirmation_token! } }, 'agent-key'),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    const confirmed = await service.propose(
      { ...odd, context: { confirmation_token: confirmation_token! } },
      'agent-key',
    );
    expect(confirmed.outcome).toBe('ALLOW');
    expect(await logText()).not.toMatch(/not-a-number|another-one|12345678/);
  });
});
