import { defineConfig } from 'vitest/config';

// For code whose tests live next to it (the proof code): the unit tests only. The Redis
// suite adds minutes per mutant of code it shares with them; a mutant only it would kill
// counts as a survivor here, so the score can only be understated.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
