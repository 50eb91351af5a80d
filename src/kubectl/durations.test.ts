import { describe, expect, it } from 'vitest';
import { humanDuration } from './durations.js';

describe('humanDuration: ages as kubectl prints them', () => {
  it.each([
    [-5_000, '0s'],
    [0, '0s'],
    [59_999, '59s'],
    [119_000, '119s'],
    [120_000, '2m'],
    [200_000, '3m20s'],
    [599_000, '9m59s'],
    [600_000, '10m'],
    [179 * 60_000, '179m'],
    [3 * 3_600_000, '3h'],
    [5 * 3_600_000 + 10 * 60_000, '5h10m'],
    [8 * 3_600_000, '8h'],
    [47 * 3_600_000, '47h'],
    [48 * 3_600_000, '2d'],
    [52 * 3_600_000, '2d4h'],
    [8 * 86_400_000, '8d'],
  ])('%i ms is %s', (milliseconds, text) => {
    expect(humanDuration(milliseconds)).toBe(text);
  });
});
