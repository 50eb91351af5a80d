import { readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { resolveEngineSettings } from '../engine/index.js';
import type { IndexSnapshot } from '../index/index.js';
import { junitReport } from '../policy-tools/junit-report.js';
import { checkManifests, formatFinding } from '../policy-tools/manifest-findings.js';
import { parsePolicyTestSuite, type PolicyTestSuite } from '../policy-tools/policy-test-suite.js';
import { RuleCoverageCounter } from '../policy-tools/rule-coverage.js';
import { runPolicyCase, type CaseResult } from '../policy-tools/run-policy-case.js';
import { readLocatedManifests } from '../sources/located-manifests.js';
import { listManifestFiles } from '../sources/manifest-folder.js';
import { yamlDocuments } from '../sources/yaml-documents.js';
import { parseCommandLine, runCommand, UsageError } from './command-line.js';

const HELP = `Usage: arbiter test PATH... [--run REGEX] [-o text|json] [--junit FILE]
                    [--coverage] [--min-coverage PERCENT]

Runs policy test suites (*.test.yaml in the given folders, or the named files; kind
PolicyTest, apiVersion test.arbiter.dev/v1alpha1) against their manifests with the
server's own engine. No cluster, Redis or server is needed.

  --run REGEX           only the cases whose "suite/case" name matches
  -o json               the results as JSON
  --junit FILE          also write JUnit XML
  --coverage            per policy rule, how many cases matched and decided it, and the
                        rules no case reached
  --min-coverage PCT    fail when fewer than PCT % of the rules were reached
Exit status: 0 all passed, 1 a case failed (or coverage too low), 2 an invalid suite,
invalid manifests, no suites, or a usage error.
`;

/** An invalid suite or invalid manifests: exit 2, never a silent pass. */
class InvalidSuiteError extends Error {}

interface LoadedSuite {
  file: string;
  suite: PolicyTestSuite;
  snapshot: IndexSnapshot;
}

interface SuiteResult {
  name: string;
  file: string;
  cases: CaseResult[];
}

export async function runPolicyTests(argv: string[]): Promise<number> {
  try {
    return await runCommand(HELP, () => parseOptions(argv), run);
  } catch (err) {
    if (err instanceof InvalidSuiteError) {
      process.stderr.write(`arbiter test: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}

async function run(options: TestOptions): Promise<number> {
  const files = await suiteFiles(options.paths);
  const loaded = (await Promise.all(files.map(loadSuites))).flat();
  const coverage = new RuleCoverageCounter();
  const results: SuiteResult[] = loaded.map(({ file, suite, snapshot }) => {
    coverage.addRules(snapshot);
    const settings = resolveEngineSettings(suite.spec.settings ?? {});
    const cases = suite.spec.cases
      .filter((c) => options.run === undefined || options.run.test(`${suite.metadata.name}/${c.name}`))
      .map((c) => runPolicyCase(snapshot, c, new Date(c.now ?? suite.spec.now ?? Date.now()), settings));
    for (const result of cases) coverage.count(result.decision);
    return { name: suite.metadata.name, file, cases };
  });
  const all = results.flatMap((r) => r.cases);
  const failed = all.filter((c) => !c.passed).length;
  const percent = coverage.percent();
  const lowCoverage = options.minCoverage !== undefined && percent < options.minCoverage;
  process.stdout.write(
    options.output === 'json'
      ? jsonReport(results, options.coverage || options.minCoverage !== undefined ? coverage : undefined)
      : textReport(results, options.coverage ? coverage : undefined),
  );
  if (options.junit)
    await writeFile(
      options.junit,
      junitReport(
        results.map((r) => ({ ...r, cases: r.cases.map((c) => ({ name: c.name, failures: c.failures })) })),
      ),
    );
  if (lowCoverage)
    process.stderr.write(
      `rule coverage ${percent.toFixed(1)} % is below --min-coverage ${options.minCoverage} %\n`,
    );
  if (options.output !== 'json') process.stdout.write(`${all.length - failed} passed, ${failed} failed\n`);
  return failed > 0 || lowCoverage ? 1 : 0;
}

interface TestOptions {
  paths: string[];
  run: RegExp | undefined;
  output: 'text' | 'json';
  junit: string | undefined;
  coverage: boolean;
  minCoverage: number | undefined;
}

function parseOptions(argv: string[]): TestOptions | 'help' {
  const { values, positionals } = parseCommandLine(argv, {
    run: { type: 'string' },
    output: { type: 'string', short: 'o', default: 'text' },
    junit: { type: 'string' },
    coverage: { type: 'boolean', default: false },
    'min-coverage': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return 'help';
  if (positionals.length === 0) throw new UsageError('name at least one test suite file or folder');
  if (values.output !== 'text' && values.output !== 'json')
    throw new UsageError(`-o must be text or json, not ${values.output}`);
  const minCoverage = values['min-coverage'] === undefined ? undefined : Number(values['min-coverage']);
  if (minCoverage !== undefined && !(minCoverage >= 0 && minCoverage <= 100))
    throw new UsageError(`--min-coverage takes a percentage from 0 to 100, not ${values['min-coverage']}`);
  let pattern: RegExp | undefined;
  try {
    pattern = values.run === undefined ? undefined : new RegExp(values.run);
  } catch (err) {
    throw new UsageError(`--run: ${(err as Error).message}`);
  }
  return {
    paths: positionals,
    run: pattern,
    output: values.output,
    junit: values.junit,
    coverage: values.coverage,
    minCoverage,
  };
}

/** *.test.yaml below folders, named files as they are; none at all is an error. */
async function suiteFiles(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    let info;
    try {
      info = await stat(path);
    } catch {
      throw new UsageError(`${path}: no such file or folder`);
    }
    if (!info.isDirectory()) files.push(path);
    else files.push(...(await listManifestFiles(path)).filter((f) => /\.test\.ya?ml$/i.test(f)));
  }
  if (files.length === 0) throw new InvalidSuiteError(`no test suites (*.test.yaml) in ${paths.join(', ')}`);
  return files;
}

async function loadSuites(file: string): Promise<LoadedSuite[]> {
  const suites: LoadedSuite[] = [];
  let index = 0;
  for (const { document, error } of yamlDocuments(await readFile(file, 'utf8'))) {
    index += 1;
    if (error !== undefined) throw new InvalidSuiteError(`${file} (document ${index}): ${error}`);
    const raw: unknown = document.toJS({ maxAliasCount: 100 });
    if (raw === null || raw === undefined) continue;
    const parsed = parsePolicyTestSuite(raw);
    if ('errors' in parsed)
      throw new InvalidSuiteError(
        `${file} (document ${index}) is not a valid PolicyTest: ${parsed.errors.join('; ')}`,
      );
    suites.push({ file, suite: parsed.suite, snapshot: await manifestsOf(file, parsed.suite) });
  }
  return suites;
}

async function manifestsOf(file: string, suite: PolicyTestSuite): Promise<IndexSnapshot> {
  const paths = suite.spec.manifests.map((p) => resolve(dirname(file), p));
  let read;
  try {
    read = await readLocatedManifests(paths);
  } catch (err) {
    throw new InvalidSuiteError(
      `${file}: suite ${suite.metadata.name}: manifests: ${(err as Error).message}`,
    );
  }
  const { findings, snapshot } = checkManifests(read.objects, read.problems);
  const errors = findings.filter((f) => f.severity === 'error');
  if (errors.length > 0)
    throw new InvalidSuiteError(
      `${file}: suite ${suite.metadata.name}: its manifests are invalid:\n` +
        errors.map((f) => `  ${formatFinding(f)}`).join('\n'),
    );
  // A renamed or deleted policy must turn CI red, not pass quietly.
  for (const testCase of suite.spec.cases) {
    const policy = testCase.expect.policy;
    if (typeof policy === 'string' && !definesPolicy(snapshot, policy))
      throw new InvalidSuiteError(
        `${file}: suite ${suite.metadata.name}, case "${testCase.name}": expects policy ${policy}, which the manifests do not define`,
      );
  }
  return snapshot;
}

/** A Policy by name, or a NamespacedPolicy by `namespace/name` (as trails name it). */
function definesPolicy(snapshot: IndexSnapshot, name: string): boolean {
  const slash = name.indexOf('/');
  if (slash === -1) return snapshot.policy(name) !== undefined;
  return snapshot.status('NamespacedPolicy', name.slice(slash + 1), name.slice(0, slash)) !== undefined;
}

function textReport(results: readonly SuiteResult[], coverage: RuleCoverageCounter | undefined): string {
  const lines: string[] = [];
  for (const suite of results)
    for (const result of suite.cases) {
      lines.push(`${result.passed ? 'PASS' : 'FAIL'} ${suite.name}/${result.name}`);
      for (const failure of result.failures) lines.push(`     ${failure}`);
    }
  if (coverage) {
    lines.push('', 'rule coverage (cases matched / decided):');
    for (const rule of coverage.report())
      lines.push(
        `  ${rule.policy} rule ${rule.ruleIndex} (${rule.capability}): ${rule.matched} / ${rule.decided}`,
      );
    const unreached = coverage.unreached();
    lines.push(
      `  ${coverage.percent().toFixed(1)} % of rules reached` +
        (unreached.length > 0
          ? `; never reached: ${unreached.map((r) => `${r.policy} rule ${r.ruleIndex}`).join(', ')}`
          : ''),
      '',
    );
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

function jsonReport(results: readonly SuiteResult[], coverage: RuleCoverageCounter | undefined): string {
  const all = results.flatMap((r) => r.cases);
  return `${JSON.stringify(
    {
      passed: all.filter((c) => c.passed).length,
      failed: all.filter((c) => !c.passed).length,
      suites: results.map((suite) => ({
        name: suite.name,
        file: suite.file,
        cases: suite.cases.map((c) => ({
          name: c.name,
          passed: c.passed,
          failures: c.failures,
          outcome: c.decision.outcome,
          policy: c.decision.evaluation.policy_matched,
          ...(c.decision.evaluation.tier !== undefined ? { tier: c.decision.evaluation.tier } : {}),
          reason: c.decision.reason,
          risk_score: c.decision.risk_score,
        })),
      })),
      ...(coverage ? { coverage: { percent: coverage.percent(), rules: coverage.report() } } : {}),
    },
    null,
    2,
  )}\n`;
}
