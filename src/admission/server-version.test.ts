import { describe, expect, it } from 'vitest';
import { formatServerVersion, isAtLeast, parseServerVersion } from './server-version.js';

describe('parseServerVersion', () => {
  it('reads major and minor when both are numbers, without needing gitVersion', () => {
    expect(parseServerVersion({ major: '1', minor: '27' })).toStrictEqual({ major: 1, minor: 27 });
  });

  it('falls back to gitVersion when minor is not a number', () => {
    expect(parseServerVersion({ major: '1', minor: 'x', gitVersion: 'v1.30.2' })).toStrictEqual({
      major: 1,
      minor: 30,
    });
  });

  it('reads a gitVersion with multi-digit numbers', () => {
    expect(parseServerVersion({ gitVersion: 'v10.2.0' })).toStrictEqual({ major: 10, minor: 2 });
  });

  it('refuses a gitVersion that does not start with v<major>.<minor>', () => {
    expect(() => parseServerVersion({ gitVersion: 'devel-v1.30.0' })).toThrow(/cannot read/);
  });
});

describe('isAtLeast', () => {
  it.each([
    [{ major: 1, minor: 28 }, true],
    [{ major: 1, minor: 29 }, true],
    [{ major: 2, minor: 0 }, true],
    [{ major: 1, minor: 27 }, false],
    [{ major: 0, minor: 30 }, false],
  ])('%j is at least 1.28: %s', (version, expected) => {
    expect(isAtLeast(version, 1, 28)).toBe(expected);
  });
});

describe('formatServerVersion', () => {
  it('writes major.minor', () => {
    expect(formatServerVersion({ major: 1, minor: 27 })).toBe('1.27');
  });
});
