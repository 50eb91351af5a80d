import { defineConfig } from 'vitest/config';

// For src/audit/kube: the unit tests and the ConfigMap checkpoint store's suite, which starts
// a kube-apiserver each time it runs (so the full config leaves it out).
export default defineConfig({
  test: {
    include: ['src/audit/**/*.test.ts', 'test/audit-redis/configmap-checkpoint-store.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
