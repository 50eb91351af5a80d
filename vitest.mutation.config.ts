import { defineConfig } from 'vitest/config';

// The tests Stryker runs against each mutant: those that load src/ in the test process.
// The API, CLI and operator suites drive the built dist/ in child processes, so a mutant
// of src/ never reaches them; running them would only slow every mutant down.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/audit-redis/**/*.test.ts', 'test/auth/**/*.test.ts'],
    exclude: ['test/audit-redis/configmap-checkpoint-store.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
