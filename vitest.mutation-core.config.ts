import { defineConfig } from 'vitest/config';

// For the chain's core (`chain.ts`, `canonical-writer.ts`): the tests of the top-level
// audit files only, where their own tests live. Every audit test runs them, so the full unit
// set costs minutes per mutant; a mutant only a test elsewhere would kill counts as a
// survivor here, so the score can only be understated.
export default defineConfig({
  test: {
    include: ['src/audit/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
