// The survivors of a Stryker JSON report, placed in today's source:
//
//   node scripts/mutation-survivors.mjs reports/mutation-<name>/mutation.json
//       one line per survivor: file:line:column mutator: original => replacement
//   node scripts/mutation-survivors.mjs reports/mutation-<name>/mutation.json --ranges
//       a MUTATE value that selects only them, to re-measure after adding tests:
//       MUTATE="$(node scripts/mutation-survivors.mjs <report> --ranges)" MUTATE_NAME=<name>-again \
//         npx stryker run stryker.part.config.mjs --force
//
// Lines are followed from the report's copy of each file to the file as it is now; a
// survivor whose lines changed since is left out and counted on stderr (its code is new:
// measure it with its file). `--incremental` is no substitute: it was seen to keep
// survivors as survived although new tests kill them.
/* global process, console */
import { readFileSync } from 'node:fs';

const [reportPath, mode] = process.argv.slice(2);
if (!reportPath || (mode !== undefined && mode !== '--ranges')) {
  console.error('usage: node scripts/mutation-survivors.mjs <mutation.json> [--ranges]');
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportPath, 'utf8'));

/** Maps each line number of `before` that is unchanged in `after` to its number there (longest common subsequence). */
function lineMap(before, after) {
  const n = before.length;
  const m = after.length;
  const common = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      common[i][j] =
        before[i] === after[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
    }
  }
  const map = new Map();
  for (let i = 0, j = 0; i < n && j < m;) {
    if (before[i] === after[j]) map.set((i += 1), (j += 1));
    else if (common[i + 1][j] >= common[i][j + 1]) i += 1;
    else j += 1;
  }
  return map;
}

const out = [];
let lost = 0;
for (const [file, { source, mutants }] of Object.entries(report.files)) {
  const survivors = mutants.filter((m) => m.status === 'Survived' || m.status === 'NoCoverage');
  if (survivors.length === 0) continue;
  let now;
  try {
    now = readFileSync(file, 'utf8');
  } catch {
    lost += survivors.length;
    continue;
  }
  const before = source.split('\n');
  const map = lineMap(before, now.split('\n'));
  for (const { location, mutatorName, replacement, status } of survivors) {
    const { start, end } = location;
    const [from, to] = [map.get(start.line), map.get(end.line)];
    if (from === undefined || to === undefined) {
      lost += 1;
      continue;
    }
    if (mode === '--ranges') {
      // Stryker selects the mutants that lie wholly inside a range: a column either side is safe.
      out.push(`${file}:${from}:${Math.max(0, start.column - 1)}-${to}:${end.column + 1}`);
    } else {
      const first = before[start.line - 1];
      const original =
        start.line === end.line
          ? first.slice(start.column - 1, end.column - 1)
          : `${first.slice(start.column - 1)} ...`;
      const shown = (replacement ?? '').replace(/\s+/g, ' ');
      out.push(`${file}:${from}:${start.column} ${status} ${mutatorName}: ${original.trim()}  =>  ${shown}`);
    }
  }
}
console.log(mode === '--ranges' ? [...new Set(out)].join(',') : out.join('\n'));
if (lost > 0) console.error(`${lost} survivor(s) left out: their lines changed since the report`);
