import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_MANIFESTS } from '../support/arbiter-process.js';
import { TEAM_MANIFESTS } from '../support/team-manifests.js';
import { runArbiter, useFixtureDir } from './support/cli-run.js';

const FOREIGN = `apiVersion: governance.arbiter.dev/v1alpha1
kind: NamespacedActorGrant
metadata: {name: thief, namespace: team-a}
spec:
  actor: {id: thief, subjects: [{kind: ServiceAccount, name: deployer, namespace: team-b}]}
  grants: [{capability: email.send}]
`;

const SHADOWED = `apiVersion: governance.arbiter.dev/v1alpha1
kind: NamespacedPolicy
metadata: {name: shadow, namespace: team-a}
spec:
  rules:
    - {capability: email.send, outcome: DENY, priority: 10}
    - {capability: email.send, condition: "parameters.subject == 'x'", outcome: ESCALATE}
`;

const proposal = (actor: string, capability: string, parameters: string) => `      proposal:
        actor: {id: ${actor}, type: ai-agent}
        action: {capability: ${capability}, parameters: ${parameters}}
`;

describe('the CLI with the tenancy kinds', () => {
  const fixtures = useFixtureDir('arbiter-tenancy-cli-');

  it('runs the example of docs/tenancy.md as written: two OutsideDelegation warnings, every case passes', async () => {
    const checked = await runArbiter(['validate', 'examples/tenancy/manifests']);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    const warnings = checked.stdout.trim().split('\n');
    expect(warnings).toEqual([
      expect.stringMatching(
        /team-a\.yaml:\d+: NamespacedActorGrant\/team-a\/report-bot: warning: OutsideDelegation: .*payments\.transfer \(not delegated\), db\.restore \(risk level critical is above high\)$/,
      ),
      expect.stringMatching(
        /team-c\.yaml:\d+: NamespacedActorGrant\/team-c\/helper: warning: OutsideDelegation: no Delegation covers namespace team-c/,
      ),
    ]);
    const tested = await runArbiter(['test', 'examples/tenancy/tests']);
    expect(tested.code, tested.stdout + tested.stderr).toBe(0);
    expect(tested.stdout.trim().split('\n').at(-1)).toBe('6 passed, 0 failed');
  });

  it('arbiter validate accepts them, warns about OutsideDelegation and fails on a foreign subject', async () => {
    await fixtures.write('teams/teams.yaml', TEAM_MANIFESTS);
    const ok = await runArbiter(['validate', EXAMPLE_MANIFESTS, fixtures.path('teams')]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(
      /teams\.yaml:\d+: NamespacedActorGrant\/team-a\/bot: warning: OutsideDelegation: .*deploy\.production \(not delegated\)/,
    );
    expect(ok.stdout).toMatch(
      /NamespacedPolicy\/team-b\/mail: warning: OutsideDelegation: no Delegation covers namespace team-b/,
    );

    await fixtures.write('foreign/foreign.yaml', FOREIGN);
    const bad = await runArbiter(['validate', EXAMPLE_MANIFESTS, fixtures.path('foreign')]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(
      /foreign\.yaml:\d+: NamespacedActorGrant\/team-a\/thief: ForeignSubject: binds ServiceAccount team-b\/deployer/,
    );
  });

  it("arbiter validate warns of a NamespacedPolicy's rules that can never decide, naming it ns/name", async () => {
    await fixtures.write('shadow/teams.yaml', TEAM_MANIFESTS);
    await fixtures.write('shadow/shadow.yaml', SHADOWED);
    const result = await runArbiter(['validate', EXAMPLE_MANIFESTS, fixtures.path('shadow')]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /shadow\.yaml:\d+: NamespacedPolicy\/team-a\/shadow: warning: rule 1 \(capability email\.send\) can never decide: policy team-a\/shadow rule 0/,
    );
  });

  it('arbiter test decides namespaced actors and checks, and reports, the tier', async () => {
    await fixtures.write('suite/teams.yaml', TEAM_MANIFESTS);
    const file = await fixtures.write(
      'suite/teams.test.yaml',
      `apiVersion: test.arbiter.dev/v1alpha1
kind: PolicyTest
metadata: {name: teams}
spec:
  manifests: [${EXAMPLE_MANIFESTS}, ${join(fixtures.path('suite'), 'teams.yaml')}]
  now: "2026-03-02T10:00:00Z"
  cases:
    - name: team A holds mail
${proposal('team-a/bot', 'email.send', '{to: a@example.com, subject: hold}')}      expect: {outcome: ESCALATE, policy: team-a/mail, tier: namespace}
    - name: team A sends other mail
${proposal('team-a/bot', 'email.send', '{to: a@example.com, subject: hi}')}      expect: {outcome: ALLOW}
    - name: deploying is outside the Delegation
${proposal('team-a/bot', 'deploy.production', '{service: web, version: v2}')}      expect: {outcome: DENY, authorityCheck: outside_delegation}
    - name: wrong tier
${proposal('team-a/bot', 'email.send', '{to: a@example.com, subject: hold}')}      expect: {tier: cluster}
`,
    );
    const result = await runArbiter(['test', file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('PASS teams/team A holds mail\n');
    expect(result.stdout).toContain('PASS teams/team A sends other mail\n');
    expect(result.stdout).toContain('PASS teams/deploying is outside the Delegation\n');
    expect(result.stdout).toContain('FAIL teams/wrong tier\n     expected tier "cluster", got "namespace"\n');
    const json = await runArbiter(['test', file, '-o', 'json']);
    const cases = (
      JSON.parse(json.stdout) as { suites: Array<{ cases: Array<{ name: string; tier?: string }> }> }
    ).suites[0]!.cases;
    expect(cases.find((c) => c.name === 'team A holds mail')).toMatchObject({ tier: 'namespace' });
    const covered = await runArbiter(['test', file, '--coverage']);
    expect(covered.stdout).toContain('  team-a/mail rule 0 (email.send): 2 / 2\n');
    expect(covered.stdout).toContain('  team-b/mail rule 0 (email.send): 0 / 0\n');
    expect(covered.stdout).toMatch(/never reached: .*team-b\/mail rule 0/);
  });
});
