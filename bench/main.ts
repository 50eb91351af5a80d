import { cpus, loadavg, totalmem } from 'node:os';
import { admissionBench } from './admission.bench.js';
import { appendBoundsBench } from './append-bounds.bench.js';
import { appendBench } from './append.bench.js';
import { appendTreeBench } from './append-tree.bench.js';
import { consoleBench } from './console.bench.js';
import { indexBuildBench } from './index-build.bench.js';
import { mcpProxyBench } from './mcp-proxy.bench.js';
import { proofsBench } from './proofs.bench.js';
import { proposeBench } from './propose.bench.js';
import { queryBench } from './query.bench.js';
import { reactionBench } from './reaction.bench.js';
import { recoveryBench } from './recovery.bench.js';
import { scaleBench } from './scale.bench.js';
import { tenancyBench } from './tenancy.bench.js';
import { timeIndexBench } from './time-index.bench.js';
import { verifyBench } from './verify.bench.js';
import { Report } from './support/report.js';
import { benchSettings, type BenchSettings } from './support/settings.js';

type Bench = (report: Report, settings: BenchSettings) => Promise<void>;

const BENCHES: Record<string, Bench> = {
  propose: proposeBench,
  append: appendBench,
  'append-tree': appendTreeBench,
  verify: verifyBench,
  proofs: proofsBench,
  scale: scaleBench,
  query: queryBench,
  admission: admissionBench,
  'index-build': indexBuildBench,
  'time-index': timeIndexBench,
  'append-bounds': appendBoundsBench,
  reaction: reactionBench,
  recovery: recoveryBench,
  'mcp-proxy': mcpProxyBench,
  console: consoleBench,
  tenancy: tenancyBench,
};

/** Names for several benchmarks at once. `timing`: the wall-clock targets kept out of the tests. */
const GROUPS: Record<string, string[]> = {
  timing: ['index-build', 'time-index', 'append-bounds', 'reaction', 'recovery'],
};

/** `npm run bench [-- NAME... ] [--quick]`: runs the named benchmarks or groups (all by default). */
async function main(argv: string[]): Promise<void> {
  const quick = argv.includes('--quick');
  const names = [...new Set(argv.filter((a) => !a.startsWith('--')).flatMap((n) => GROUPS[n] ?? [n]))];
  const unknown = names.filter((n) => !(n in BENCHES));
  if (unknown.length > 0) {
    console.error(
      `unknown benchmark(s): ${unknown.join(', ')}; choose from ${[...Object.keys(BENCHES), ...Object.keys(GROUPS)].join(', ')}`,
    );
    process.exit(2);
  }
  const selected = names.length > 0 ? names : Object.keys(BENCHES);
  const settings = benchSettings(quick);
  console.log(machine());
  const report = new Report();
  const started = Date.now();
  for (const name of selected) {
    const t0 = Date.now();
    console.log(
      `\n== ${name}${quick ? ' (quick)' : ''}  load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    await BENCHES[name]!(report, settings);
    console.log(`   (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  }
  console.log(`\n${report.markdown()}\n`);
  console.log(`total ${((Date.now() - started) / 1000).toFixed(0)} s; ${machine()}`);
}

function machine(): string {
  const cpu = cpus();
  return (
    `machine: ${cpu.length} x ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
    `Node ${process.version}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`
  );
}

await main(process.argv.slice(2));
