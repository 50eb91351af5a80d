import { describe, expect, it, vi } from 'vitest';
import { isKnownTimeZone, zoneClock } from './time-zone.js';

describe('zoneClock', () => {
  it('tells known zones from unknown ones', () => {
    expect(isKnownTimeZone('Europe/Berlin')).toBe(true);
    expect(isKnownTimeZone('Mars/Olympus')).toBe(false);
    expect(zoneClock('Mars/Olympus')).toBeNull();
  });

  it('remembers the formatters of up to 1024 zones, then starts over', async () => {
    // A fresh module: the count starts from an empty cache.
    vi.resetModules();
    const { zoneClock: clock } = await import('./time-zone.js');
    const utc = clock('UTC');
    for (let i = 1; i < 1024; i++) clock(`Nowhere/Zone${i}`);
    expect(clock('UTC')).toBe(utc);
    clock('Nowhere/OneTooMany');
    expect(clock('UTC')).not.toBe(utc);
  });
});
