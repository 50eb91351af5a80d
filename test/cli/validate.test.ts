import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_MANIFESTS } from '../support/arbiter-process.js';
import { runArbiter, useFixtureDir } from './support/cli-run.js';

const CAPABILITIES = `apiVersion: governance.arbiter.dev/v1alpha1
kind: Capability
metadata:
  name: db-write
spec:
  name: db.write
  riskLevel: medium
`;

/** Three documents; the third one's second rule has a condition that does not compile (its line: 26). */
const POLICIES = `apiVersion: governance.arbiter.dev/v1alpha1
kind: Policy
metadata:
  name: first
spec:
  rules:
    - capability: db.write
      outcome: ALLOW
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: not-ours
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: Policy
metadata:
  name: broken
spec:
  rules:
    - capability: db.write
      condition: "parameters.rows > 10"
      outcome: DENY
    - capability: db.write
      outcome: ESCALATE
      condition: >-
        parameters.rows >
`;

describe('arbiter validate', () => {
  const fixtures = useFixtureDir('arbiter-validate-');
  const write = fixtures.write;
  const at = fixtures.path;

  it('passes the examples (exit 0) and says what it checked', async () => {
    const result = await runArbiter(['validate', EXAMPLE_MANIFESTS, 'examples/admission']);
    expect(result).toMatchObject({ code: 0, stdout: '' });
    expect(result.stderr).toBe('15 object(s): 0 error(s), 0 warning(s)\n');
  });

  it('points at FILE:LINE of a broken condition in the third document of a file', async () => {
    const capabilities = await write('set1/capabilities.yaml', CAPABILITIES);
    const policies = await write('set1/policies.yaml', POLICIES);
    const result = await runArbiter(['validate', capabilities, policies]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      new RegExp(
        `^${policies}:26: Policy/broken: InvalidCondition: policy broken, rule 1 \\(capability db\\.write\\): the condition does not compile`,
        'm',
      ),
    );
    expect(result.stderr).toContain('3 object(s): 1 error(s)');
  });

  it("type-checks conditions against the capability's parameter schema", async () => {
    const folder = at('set-typed');
    await write(
      'set-typed/capability.yaml',
      `apiVersion: governance.arbiter.dev/v1alpha1
kind: Capability
metadata:
  name: db-query
spec:
  name: db.query
  riskLevel: low
  parameterSchema:
    type: object
    properties:
      query: {type: string}
      rows: {type: integer}
`,
    );
    const policies = await write(
      'set-typed/policies.yaml',
      `apiVersion: governance.arbiter.dev/v1alpha1
kind: Policy
metadata:
  name: typed
spec:
  rules:
    - {capability: db.query, condition: "parameters.rows > 100 && parameters.query.startsWith('drop')", outcome: DENY}
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: Policy
metadata:
  name: query-as-bool
spec:
  rules:
    - {capability: db.query, condition: "parameters.query", outcome: DENY}
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: Policy
metadata:
  name: mixed
spec:
  rules:
    - {capability: db.query, condition: '1 + "a" == 2', outcome: DENY}
`,
    );
    const result = await runArbiter(['validate', folder]);
    expect(result.code).toBe(1);
    expect(result.stdout.split('\n').filter(Boolean)).toEqual([
      `${policies}:15: Policy/query-as-bool: InvalidCondition: policy query-as-bool, rule 0 (capability db.query): ` +
        'the condition does not compile: a condition must be a bool, but this one is a value of type string',
      `${policies}:23: Policy/mixed: InvalidCondition: policy mixed, rule 0 (capability db.query): ` +
        "the condition does not compile: <input>:1:2: found no matching overload for '+' applied to (int, string)",
    ]);
    expect(result.stderr).toBe('4 object(s): 2 error(s), 0 warning(s)\n');
  });

  it('warns about unknown capabilities, rules that can never decide and ambiguous rules; --strict fails on them', async () => {
    const folder = at('set2');
    await write('set2/capabilities.yaml', CAPABILITIES);
    const rules = await write(
      'set2/rules.yaml',
      `apiVersion: governance.arbiter.dev/v1alpha1
kind: Policy
metadata:
  name: rules
spec:
  rules:
    - capability: db.write
      outcome: DENY
      priority: 10
    - capability: db.write
      condition: "parameters.rows < 5"
      outcome: ALLOW
    - capability: tickets.create
      outcome: ALLOW
    - capability: tickets.create
      outcome: REQUIRE_CONFIRMATION
`,
    );
    const result = await runArbiter(['validate', folder]);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n').filter(Boolean)).toEqual([
      `${rules}:10: Policy/rules: warning: rule 1 (capability db.write) can never decide: policy rules rule 0 (priority 10, no condition) always decides db.write first`,
      `${rules}:13: Policy/rules: warning: UnknownCapability: rules name capabilities that are not registered: tickets.create; they apply once registered`,
      `${rules}:13: Policy/rules: warning: rule 2 (capability tickets.create) has no condition, like policy rules rule 3 at the same priority 0, whose REQUIRE_CONFIRMATION always wins over this ALLOW; give one a condition or another priority`,
    ]);
    expect((await runArbiter(['validate', '--strict', folder])).code).toBe(1);
  });

  it('reports schema errors at the field, duplicates across files and identity conflicts', async () => {
    const grants = await write(
      'set3/grants.yaml',
      `apiVersion: governance.arbiter.dev/v1alpha1
kind: ActorGrant
metadata:
  name: one
  creationTimestamp: "2026-01-01T00:00:00Z"
spec:
  actor:
    id: agent-1
    subjects: [{kind: ServiceAccount, namespace: agents, name: bot}]
  grants: []
---
apiVersion: governance.arbiter.dev/v1alpha1
kind: ActorGrant
metadata:
  name: two
spec:
  actor:
    id: agent-2
    subjects:
      - {kind: User, name: alice}
      - {kind: ServiceAccount, namespace: agents, name: bot}
  grants:
    - capability: db.write
      constraints: {rateLimit: {maxRequests: 0, windowSeconds: 60}}
`,
    );
    const again = await write(
      'set3/again.yaml',
      `apiVersion: governance.arbiter.dev/v1alpha1
kind: ActorGrant
metadata:
  name: one
spec:
  actor: {id: agent-3}
  grants: []
`,
    );
    const result = await runArbiter(['validate', '-o', 'json', at('set3')]);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report.valid).toBe(false);
    expect(report.errors).toEqual([
      // Files are read in path order; the first to define an object keeps it, as the server does.
      {
        file: grants,
        line: 1,
        object: 'ActorGrant/one',
        message: `ActorGrant/one is already defined at ${again}:1`,
      },
      {
        file: grants,
        line: 24,
        object: 'ActorGrant/two',
        message: expect.stringMatching(
          /^spec\.grants\[0\]\.constraints\.rateLimit\.maxRequests: must be >= 1/,
        ),
      },
    ]);
    // With the schema error fixed, the identity conflict is what remains, at the subject's line.
    await write(
      'set3/grants.yaml',
      (await readFile(grants, 'utf8')).replace('maxRequests: 0', 'maxRequests: 1'),
    );
    const conflict = JSON.parse((await runArbiter(['validate', '-o', 'json', grants])).stdout);
    expect(conflict.errors).toEqual([
      {
        file: grants,
        line: 21,
        object: 'ActorGrant/two',
        message: expect.stringContaining(
          'Conflict: identity system:serviceaccount:agents:bot is already bound to actor agent-1 by the older ActorGrant one',
        ),
      },
    ]);
  });

  it('writes GitHub annotations with -o github', async () => {
    const policies = await write('set4/policies.yaml', POLICIES);
    const result = await runArbiter(['validate', '-o', 'github', policies]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      new RegExp(
        `^::error file=${policies.replaceAll(':', '%3A')},line=26,title=Policy/broken::InvalidCondition: `,
        'm',
      ),
    );
    expect(result.stdout).toMatch(/^::warning file=.*,line=7,title=Policy\/first::UnknownCapability/m);
  });

  it('reports a YAML syntax error at its line, and usage errors with exit 2', async () => {
    const bad = await write(
      'set5/bad.yaml',
      'apiVersion: governance.arbiter.dev/v1alpha1\nkind: Policy\nmetadata: {name: x\n',
    );
    const syntax = await runArbiter(['validate', bad]);
    expect(syntax.code).toBe(1);
    expect(syntax.stdout).toMatch(new RegExp(`^${bad}:4: Flow map .*\\(line 4, column 1\\)$`, 'm'));
    for (const args of [
      ['validate'],
      ['validate', at('nothing-here')],
      ['validate', '-o', 'xml', bad],
      ['validate', '--nope', bad],
    ]) {
      const result = await runArbiter(args);
      expect([args, result.code]).toEqual([args, 2]);
      expect(result.stderr).toMatch(/^arbiter validate: .+ \(see arbiter validate --help\)\n$/);
    }
  });
});
