// One part of the mutation scope in a sandbox, report and incremental file of its own, so
// that parts can run side by side and a part that finished keeps its result:
//
//   MUTATE='src/audit/file/**/*.ts' npx stryker run stryker.part.config.mjs
//   MUTATE='src/audit/redis/**/*.ts' MUTATE_TESTS=full npx stryker run stryker.part.config.mjs
//
// MUTATE: comma-separated globs of files to mutate (tests and test helpers are left out).
// MUTATE_NAME: the part's name (sandbox .stryker-tmp-<name>, reports/mutation-<name>/);
// by default taken from the first glob.
// MUTATE_TESTS: `unit` (default, vitest.mutation-unit.config.ts), `full`
// (vitest.mutation.config.ts: adds test/audit-redis against a real redis-server and test/auth)
// `kube` (vitest.mutation-kube.config.ts: the ConfigMap checkpoint store on a kube-apiserver)
// or `core` (vitest.mutation-core.config.ts: the top-level audit tests, for chain.ts and
// canonical-writer.ts, which every audit test runs).
/* global process */
import base from './stryker.config.json' with { type: 'json' };

const globs = (process.env.MUTATE ?? '').split(',').filter((glob) => glob !== '');
if (globs.length === 0) {
  throw new Error("set MUTATE to the files to mutate, e.g. MUTATE='src/audit/file/**/*.ts'");
}
const testConfigs = {
  unit: 'vitest.mutation-unit.config.ts',
  full: 'vitest.mutation.config.ts',
  kube: 'vitest.mutation-kube.config.ts',
  core: 'vitest.mutation-core.config.ts',
};
const tests = process.env.MUTATE_TESTS ?? 'unit';
if (!(tests in testConfigs)) throw new Error(`MUTATE_TESTS is unit, full, kube or core, not ${tests}`);
const name = (process.env.MUTATE_NAME ?? globs[0])
  .replace(/^src\//, '')
  .replace(/\/?\*.*$/, '')
  .replace(/\.ts$/, '')
  .replace(/[^a-z0-9]+/gi, '-');
const reports = `reports/mutation-${name}`;

export default {
  ...base,
  vitest: { configFile: testConfigs[tests] },
  mutate: [...globs, '!src/**/*.test.ts', '!src/**/test-*.ts'],
  incrementalFile: `${reports}/stryker-incremental.json`,
  jsonReporter: { fileName: `${reports}/mutation.json` },
  htmlReporter: { fileName: `${reports}/index.html` },
  tempDirName: `.stryker-tmp-${name}`,
  ignorePatterns: ['/.stryker-tmp-*', '/reports'],
  concurrency: 1,
};
