import { describe, expect, it } from 'vitest';
import { SESSION_META, sessionCorrelation } from './session-correlation.js';

describe('sessionCorrelation', () => {
  it('reads the conversation a stateless call names, and refuses one that is not a short string', () => {
    expect(sessionCorrelation(undefined)).toBeUndefined();
    expect(sessionCorrelation({ traceparent: '00-abc' })).toBeUndefined();
    expect(sessionCorrelation({ [SESSION_META]: 'run-7' })).toBe('run-7');
    expect(sessionCorrelation({ [SESSION_META]: 'x'.repeat(256) })).toBe('x'.repeat(256));
    for (const bad of ['', 'x'.repeat(257), 42, null, { id: 1 }]) {
      expect(sessionCorrelation({ [SESSION_META]: bad })).toEqual(
        new Error('_meta["dev.arbiter/session_id"] must be a string of 1 to 256 characters'),
      );
    }
  });
});
