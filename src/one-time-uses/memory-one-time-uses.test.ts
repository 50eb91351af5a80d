import { describe, expect, it } from 'vitest';
import { MemoryOneTimeUses } from './memory-one-time-uses.js';

describe('MemoryOneTimeUses', () => {
  it('grants each key to its first claim until the claim ends or is released', async () => {
    let now = new Date('2026-11-23T12:00:00Z');
    const uses = new MemoryOneTimeUses(() => now);
    const until = new Date('2026-11-23T12:01:00Z');
    const claims = await Promise.all([1, 2, 3].map(() => uses.claim('approval:d-1', until)));
    expect(claims).toEqual([true, false, false]);
    // Another key is claimed on its own.
    expect(await uses.claim('approval:d-2', until)).toBe(true);
    now = new Date('2026-11-23T12:00:59.999Z');
    expect(await uses.claim('approval:d-1', until)).toBe(false);
    now = until;
    expect(await uses.claim('approval:d-1', new Date('2026-11-23T12:05:00Z'))).toBe(true);
    expect(await uses.claim('approval:d-1', new Date('2026-11-23T12:05:00Z'))).toBe(false);
    await uses.release('approval:d-1');
    expect(await uses.claim('approval:d-1', new Date('2026-11-23T12:05:00Z'))).toBe(true);
  });
});
