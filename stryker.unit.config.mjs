// `npx stryker run stryker.unit.config.mjs --mutate ...`: stryker.config.json against the
// unit tests only (vitest.mutation-unit.config.ts), for the proof code of src/audit.
import base from './stryker.config.json' with { type: 'json' };

export default { ...base, vitest: { configFile: 'vitest.mutation-unit.config.ts' } };
