import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/arbiter-process.js';
import { runArbiter, useFixtureDir } from './support/cli-run.js';

const MANIFESTS = join(REPO, 'examples/manifests');

/** A suite over the example manifests with the given cases (YAML list items). */
const suite = (name: string, cases: string, extra = '') => `apiVersion: test.arbiter.dev/v1alpha1
kind: PolicyTest
metadata:
  name: ${name}
spec:
  manifests: [${MANIFESTS}]
  now: "2026-03-02T10:00:00Z"${extra}
  cases:
${cases}`;

const TRANSFER = `      proposal:
        actor: {id: agent-001, type: ai-agent}
        action: {capability: payments.transfer, parameters: {amount: 50000, currency: USD, to: acct-7}}
`;

describe('arbiter test', () => {
  const fixtures = useFixtureDir('arbiter-policy-test-');
  const write = fixtures.write;
  const at = fixtures.path;

  it('passes the example suites (examples/tests), one line per case and the count last', async () => {
    const result = await runArbiter(['test', 'examples/tests']);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines.at(-1)).toBe('10 passed, 0 failed');
    expect(lines.slice(0, -1).every((line) => line.startsWith('PASS examples/'))).toBe(true);
  });

  it('names a failing expectation and exits 1; --run selects cases', async () => {
    const file = await write(
      'fail/payments.test.yaml',
      suite(
        'payments',
        `    - name: large transfers are allowed (wrong)
${TRANSFER}      expect: {outcome: ALLOW, policy: payment-limits, reason: "no such words"}
    - name: large transfers are denied
${TRANSFER}      expect: {outcome: DENY}
`,
      ),
    );
    const result = await runArbiter(['test', file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('FAIL payments/large transfers are allowed (wrong)\n');
    expect(result.stdout).toContain('     expected outcome "ALLOW", got "DENY"\n');
    expect(result.stdout).toContain('     expected the reason to contain "no such words"');
    expect(result.stdout).toContain('PASS payments/large transfers are denied\n');
    expect(result.stdout.trim().split('\n').at(-1)).toBe('1 passed, 1 failed');
    const only = await runArbiter(['test', file, '--run', 'are denied$']);
    expect(only.code).toBe(0);
    expect(only.stdout.trim().split('\n').at(-1)).toBe('1 passed, 0 failed');
  });

  it('writes well-formed JUnit XML with the right counts', async () => {
    const file = at('fail/payments.test.yaml');
    const junit = at('junit.xml');
    await runArbiter(['test', file, 'examples/tests', '--junit', junit]);
    const xml = await readFile(junit, 'utf8');
    expect(XMLValidator.validate(xml)).toBe(true);
    const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml);
    expect(parsed.testsuites).toMatchObject({ tests: '12', failures: '1' });
    const suites = [parsed.testsuites.testsuite].flat();
    expect(suites.map((s: any) => [s.name, s.tests, s.failures])).toEqual([
      ['payments', '2', '1'],
      ['examples', '10', '0'],
    ]);
    const failed = [suites[0].testcase].flat().find((c: any) => c.failure);
    expect(failed.name).toBe('large transfers are allowed (wrong)');
    expect(failed.failure.message).toBe('expected outcome "ALLOW", got "DENY"');
  });

  it('turns a renamed policy into an invalid suite (exit 2), not a quiet pass', async () => {
    const file = await write(
      'renamed/payments.test.yaml',
      suite(
        'renamed',
        `    - name: decided by a policy that is gone\n${TRANSFER}      expect: {policy: payment-limits-v1}\n`,
      ),
    );
    const result = await runArbiter(['test', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('expects policy payment-limits-v1, which the manifests do not define');
  });

  it('exits 2 for invalid manifests, an invalid suite, and a folder without suites', async () => {
    const manifests = await write(
      'broken/manifests/policy.yaml',
      'apiVersion: governance.arbiter.dev/v1alpha1\nkind: Policy\nmetadata: {name: p}\nspec:\n  rules:\n    - {capability: a.b, outcome: DENY, condition: "x >"}\n',
    );
    const brokenManifests = await write(
      'broken/a.test.yaml',
      suite('a', `    - name: anything\n${TRANSFER}      expect: {outcome: DENY}\n`).replace(
        MANIFESTS,
        at('broken/manifests'),
      ),
    );
    const invalidManifests = await runArbiter(['test', brokenManifests]);
    expect(invalidManifests.code).toBe(2);
    expect(invalidManifests.stderr).toContain(`${manifests}:6: Policy/p: `);
    const badSuite = await write(
      'bad/b.test.yaml',
      suite('b', `    - name: typo\n${TRANSFER}      expect: {outcom: DENY}\n`),
    );
    const invalidSuite = await runArbiter(['test', badSuite]);
    expect(invalidSuite.code).toBe(2);
    expect(invalidSuite.stderr).toContain('suite.spec.cases[0].expect.outcom: is not an allowed field');
    const empty = await write('empty/readme.yaml', 'just: yaml\n');
    const none = await runArbiter(['test', join(empty, '..')]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no test suites (*.test.yaml)');
    expect((await runArbiter(['test'])).code).toBe(2);
    expect((await runArbiter(['test', 'examples/tests', '--min-coverage', '120'])).code).toBe(2);
  });

  it('reports rule coverage and fails below --min-coverage', async () => {
    const file = await write(
      'coverage/one.test.yaml',
      suite('one', `    - name: large transfers are denied\n${TRANSFER}      expect: {outcome: DENY}\n`),
    );
    const result = await runArbiter(['test', file, '--coverage']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('  payment-limits rule 0 (payments.transfer): 1 / 1\n');
    expect(result.stdout).toContain('  prod-writes rule 0 (database.write): 0 / 0\n');
    expect(result.stdout).toMatch(
      /20\.0 % of rules reached; never reached: email-recipients rule 0, email-recipients rule 1, payment-limits rule 1, prod-writes rule 0/,
    );
    const strict = await runArbiter(['test', file, '--min-coverage', '50']);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain('rule coverage 20.0 % is below --min-coverage 50 %');
    const json = JSON.parse((await runArbiter(['test', file, '-o', 'json', '--min-coverage', '10'])).stdout);
    expect(json).toMatchObject({ passed: 1, failed: 0, coverage: { percent: 20 } });
    expect(json.suites[0].cases[0]).toMatchObject({
      name: 'large transfers are denied',
      outcome: 'DENY',
      policy: 'payment-limits',
    });
  });
});
