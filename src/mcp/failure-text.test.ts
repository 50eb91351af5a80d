import { describe, expect, it } from 'vitest';
import { failureText } from './failure-text.js';

describe('failureText', () => {
  it('adds the code or message of the first cause that has one, however deep the SDK wrapped it', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const fetchFailed = new TypeError('fetch failed', { cause: refused });
    expect(failureText(fetchFailed)).toBe('fetch failed (ECONNREFUSED)');
    expect(
      failureText(new Error('Version negotiation probe failed: fetch failed', { cause: fetchFailed })),
    ).toBe('Version negotiation probe failed: fetch failed (ECONNREFUSED)');
    expect(failureText(new Error('failed', { cause: new Error('socket hang up') }))).toBe(
      'failed (socket hang up)',
    );
    // Said once, not twice; and a cycle of causes ends.
    expect(failureText(new Error('timed out (ETIMEDOUT)', { cause: { code: 'ETIMEDOUT' } }))).toBe(
      'timed out (ETIMEDOUT)',
    );
    const cyclic: { message: string; cause?: unknown } = { message: 'loop' };
    cyclic.cause = cyclic;
    expect(failureText(new Error('failed', { cause: cyclic }))).toBe('failed (loop)');
    expect(failureText('plain')).toBe('plain');
  });
});
