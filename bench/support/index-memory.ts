import { buildIndex, validateConfigObject } from '../../src/index/index.js';
import type { ConfigObject } from '../../src/model/index.js';
import { tenancyObjects } from './tenancy-config.js';

/**
 * Run as `node --expose-gc index-memory.js TEAMS namespaced|cluster`: prints the heap the
 * index of that configuration holds (heap after a collection with the snapshot alive,
 * minus the heap after one with only its input objects alive), in bytes.
 */
function main(argv: string[]): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  const teams = Number(argv[0]);
  const objects = tenancyObjects(teams, argv[1] === 'namespaced').map(checked);
  gc();
  const before = process.memoryUsage().heapUsed;
  const snapshot = buildIndex(objects);
  gc();
  const after = process.memoryUsage().heapUsed;
  if (snapshot.objects().length !== objects.length) throw new Error('index lost objects');
  process.stdout.write(`${after - before}\n`);
}

function checked(input: Record<string, unknown>): ConfigObject {
  const result = validateConfigObject(input);
  if (!result.ok) throw new Error(`invalid bench object: ${result.errors.join('; ')}`);
  return result.object;
}

main(process.argv.slice(2));
