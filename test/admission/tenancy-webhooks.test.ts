import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { installCrds } from '../env/install-crds.js';
import { call, KEYS, removeDir, type ArbiterProcess } from '../support/arbiter-process.js';
import { eventually } from '../operator/support/operator-env.js';
import {
  decisionIdIn,
  kubectl,
  kubectlOk,
  startWebhookController,
  untilGoverned,
} from './support/admission-env.js';

/** Bounds a wait for a change to reach the index and the statuses: a hang detector only. */
const CHANGE_BOUND_MS = 15_000;
const TEAM = 'team-a';
const BOT = `system:serviceaccount:${TEAM}:bot`;

interface AuditEntry {
  namespace?: string;
  actor_id: string;
  data: { kind: string; name: string };
}

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** RBAC lets team-a's bot write ConfigMaps and Secrets; Arbiter decides which writes happen. */
const TEAM_A = `apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: bot, namespace: team-a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: bot, namespace: team-a}
rules:
  - apiGroups: ['']
    resources: [configmaps, secrets]
    verbs: [get, list, create, update, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bot, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: bot}
subjects: [{kind: ServiceAccount, name: bot, namespace: team-a}]
`;

const capability = (name: string, riskLevel: string) => `apiVersion: governance.arbiter.dev/v1alpha1
kind: Capability
metadata: {name: ${name.replaceAll('.', '-')}}
spec: {name: ${name}, riskLevel: ${riskLevel}}
---
`;

const DELEGATION = `apiVersion: governance.arbiter.dev/v1alpha1
kind: Delegation
metadata: {name: team-a}
spec:
  namespaces: [team-a]
  capabilities: [k8s.configmaps.*]
  maxRiskLevel: high
`;

/** Binds a ServiceAccount of team-b: never allowed for a grant in team-a. */
const THIEF = `apiVersion: governance.arbiter.dev/v1alpha1
kind: NamespacedActorGrant
metadata: {name: thief, namespace: team-a}
spec:
  actor:
    id: thief
    subjects: [{kind: ServiceAccount, namespace: team-b, name: deployer}]
  grants: [{capability: k8s.configmaps.create}]
`;

/** team-a's bot, its ServiceAccount bound; Secrets are outside team-a's Delegation. */
const BOT_GRANT = `apiVersion: governance.arbiter.dev/v1alpha1
kind: NamespacedActorGrant
metadata: {name: bot, namespace: team-a}
spec:
  actor:
    id: bot
    subjects: [{kind: ServiceAccount, name: bot}]
  grants:
    - capability: k8s.configmaps.create
    - capability: k8s.configmaps.delete
    - capability: k8s.secrets.create
`;

/**
 * The tenancy kinds through both webhooks and the controller, against a real kube-apiserver
 * and kubectl, the controller under deploy/rbac: statuses and Events in the object's own
 * namespace, foreign subjects refused at apply, a namespaced actor's ServiceAccount governed
 * with both tiers and the Delegation gate, and a deleted Delegation turning grants to DENY.
 */
describeWithControlPlane('admission webhooks: Delegation, NamespacedPolicy, NamespacedActorGrant', (cp) => {
  let arbiter: ArbiterProcess;
  const apply = (yaml: string) => kubectl(cp(), ['apply', '--validate=false', '-f', '-'], { stdin: yaml });
  const asBot = (...args: string[]) => kubectl(cp(), ['-n', TEAM, ...args], { as: BOT });
  /** The conditions of an object; `namespace` undefined for a cluster-scoped one. */
  const conditions = async (resource: string, name: string, namespace: string | undefined = TEAM) => {
    const where = namespace === undefined ? [] : ['-n', namespace];
    const got = await kubectl(cp(), [...where, 'get', resource, name, '-o', 'json']);
    return got.code === 0 ? ((JSON.parse(got.stdout).status?.conditions ?? []) as Condition[]) : [];
  };
  const conditionWhere = async (
    what: string,
    [resource, name, namespace]: [string, string, string?],
    matches: (c: Condition) => boolean,
  ) =>
    (
      await eventually(
        what,
        async () => (await conditions(resource, name, namespace)).find(matches),
        CHANGE_BOUND_MS,
      )
    ).value;
  const conditionOf = (plural: string, name: string, type: string, reason: string) =>
    conditionWhere(
      `${type} ${reason} on ${TEAM}/${name}`,
      [plural, name, TEAM],
      (c) => c.type === type && c.reason === reason,
    );
  const eventAbout = async (kind: string, name: string, reason: string) =>
    (
      await eventually(
        `a ${reason} event about ${kind} ${TEAM}/${name}`,
        async () => {
          const got = await kubectl(cp(), ['-n', TEAM, 'get', 'events', '-o', 'json']);
          const items = JSON.parse(got.stdout).items as {
            reason: string;
            type: string;
            message: string;
            involvedObject: { kind: string; name: string; namespace?: string };
          }[];
          return items.find(
            (e) => e.involvedObject.kind === kind && e.involvedObject.name === name && e.reason === reason,
          );
        },
        CHANGE_BOUND_MS,
      )
    ).value;
  const proposeAsBot = async (capability: string) => {
    const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      key: KEYS.admin,
      body: { actor: { id: `${TEAM}/bot`, type: 'automation' }, action: { capability, parameters: {} } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { outcome: string; reason: string; decision_id: string };
  };
  /** Configuration audit entries of this event type (eventually: the leader audits after the index). */
  const auditEntries = async (eventType: string, matches: (e: AuditEntry) => boolean) =>
    (
      await eventually(
        `${eventType} entries`,
        async () => {
          const res = await call(arbiter.url, 'GET', `/api/v1/audit/log?event_type=${eventType}&limit=100`, {
            key: KEYS.admin,
          });
          const found = (res.body.entries as AuditEntry[]).filter(matches);
          return found.length > 0 ? found : undefined;
        },
        CHANGE_BOUND_MS,
      )
    ).value;
  const authorityCheckOf = async (decisionId: string) => {
    const res = await call(arbiter.url, 'GET', `/api/v1/audit/log/${decisionId}`, { key: KEYS.admin });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.evaluation.authority_check as string;
  };

  beforeAll(async () => {
    await installCrds(cp());
    await kubectlOk(cp(), ['apply', '-f', '-'], { stdin: TEAM_A });
    await kubectlOk(cp(), ['apply', '--validate=false', '-f', '-'], {
      stdin:
        capability('k8s.configmaps.create', 'low') +
        capability('k8s.configmaps.delete', 'medium') +
        capability('k8s.secrets.create', 'low') +
        DELEGATION,
    });
    // Applied while no webhook runs: the controller must still keep them out of use.
    await kubectlOk(cp(), ['apply', '--validate=false', '-f', '-'], {
      stdin: `${THIEF}---\n${DELEGATION.replace('name: team-a}', 'name: team-a-late}')}`,
    });
    ({ arbiter } = await startWebhookController(cp(), { identity: 'arbiter-0' }));
  }, 90_000);

  afterAll(async () => {
    await arbiter?.stop();
    if (arbiter) await removeDir(arbiter.dataDir);
  });

  it('ignores a foreign grant applied without the webhook: Ready=False ForeignSubject, a Warning event in team-a', async () => {
    const foreign = await conditionOf('namespacedactorgrants', 'thief', 'Ready', 'ForeignSubject');
    expect(foreign.status).toBe('False');
    expect(foreign.message).toContain('binds ServiceAccount team-b/deployer');
    const event = await eventAbout('NamespacedActorGrant', 'thief', 'ForeignSubject');
    expect(event).toMatchObject({ type: 'Warning', involvedObject: { namespace: TEAM } });
    expect(event.message).toContain('may bind only ServiceAccounts of team-a');
    expect((await proposeAsBot('k8s.configmaps.create')).outcome).toBe('DENY');
  });

  it('refuses a foreign grant at kubectl apply once the webhook is on, saying why', async () => {
    const refused = await eventually(
      'the configuration webhook to refuse the foreign grant',
      async () => {
        const result = await apply(THIEF.replace('name: thief', 'name: thief-2'));
        return result.code === 1 ? result : undefined;
      },
      CHANGE_BOUND_MS,
    );
    expect(refused.value.stderr).toContain(
      'admission webhook "configuration.governance.arbiter.dev" denied the request',
    );
    expect(refused.value.stderr).toContain(
      'ForeignSubject: binds ServiceAccount team-b/deployer, but a NamespacedActorGrant in team-a may bind only ServiceAccounts of team-a',
    );
    expect((await kubectl(cp(), ['-n', TEAM, 'get', 'namespacedactorgrant', 'thief-2'])).code).toBe(1);
  });

  it('keeps a Delegation listing a namespace an older one lists out of use: Conflict, an event in default', async () => {
    const conflict = await conditionWhere(
      'Ready=False Conflict on Delegation team-a-late',
      ['delegation', 'team-a-late', undefined],
      (c) => c.type === 'Ready' && c.reason === 'Conflict',
    );
    expect(conflict.status).toBe('False');
    expect(conflict.message).toContain('Delegation team-a');
    const events = await kubectl(cp(), ['-n', 'default', 'get', 'events', '-o', 'json']);
    const about = (
      JSON.parse(events.stdout).items as { involvedObject: { name: string }; reason: string }[]
    ).find((e) => e.involvedObject.name === 'team-a-late');
    expect(about?.reason).toBe('Conflict');
  });

  it('refuses a second Delegation listing team-a: the older one holds it', async () => {
    const second = await apply(DELEGATION.replace('name: team-a}', 'name: team-a-again}'));
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('Conflict:');
    expect(second.stderr).toContain('Delegation team-a');
  });

  it('accepts a grant naming a capability outside the Delegation with a warning; OutsideDelegation=True and an event', async () => {
    const applied = await apply(BOT_GRANT);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stderr).toContain(
      'Warning: NamespacedActorGrant team-a/bot: Delegation team-a does not let namespace team-a govern: k8s.secrets.create (not delegated)',
    );
    const ready = await conditionOf('namespacedactorgrants', 'bot', 'Ready', 'Accepted');
    expect(ready.status).toBe('True');
    const outside = await conditionOf(
      'namespacedactorgrants',
      'bot',
      'OutsideDelegation',
      'OutsideDelegation',
    );
    expect(outside.status).toBe('True');
    const event = await eventAbout('NamespacedActorGrant', 'bot', 'OutsideDelegation');
    expect(event.type).toBe('Warning');
    expect(event.message).toContain('k8s.secrets.create');
    const [audited] = await auditEntries(
      'actor.grant.created',
      (e) => e.data.kind === 'NamespacedActorGrant',
    );
    expect(audited).toMatchObject({ namespace: TEAM, actor_id: `${TEAM}/bot`, data: { name: 'bot' } });
  });

  it("governs the bound ServiceAccount's kubectl requests as actor team-a/bot, with the Delegation gate", async () => {
    await untilGoverned(cp(), () => asBot('create', 'secret', 'generic', 'token', '--dry-run=server'));
    const created = await asBot('create', 'configmap', 'settings', '--from-literal=mode=fast');
    expect(created.code, created.stderr).toBe(0);
    const secret = await asBot('create', 'secret', 'generic', 'token', '--from-literal=k=v');
    expect(secret.code).toBe(1);
    expect(secret.stderr).toContain('Arbiter denied k8s.secrets.create for actor team-a/bot');
    expect(secret.stderr).toContain('Namespace team-a may not grant k8s.secrets.create');
    expect(await authorityCheckOf(decisionIdIn(secret.stderr))).toBe('outside_delegation');
    expect((await kubectl(cp(), ['-n', TEAM, 'get', 'secret', 'token'])).code).toBe(1);
  });

  it('refuses a delete the namespace tier escalates, though the cluster tier has no opinion', async () => {
    const policy = await apply(`apiVersion: governance.arbiter.dev/v1alpha1
kind: NamespacedPolicy
metadata: {name: careful, namespace: team-a}
spec:
  rules: [{capability: k8s.configmaps.delete, outcome: ESCALATE}]
`);
    expect(policy.code, policy.stderr).toBe(0);
    expect(policy.stderr).not.toContain('Warning');
    await conditionOf('namespacedpolicies', 'careful', 'OutsideDelegation', 'WithinDelegation');
    const deleted = await eventually(
      'the namespace tier to escalate the delete',
      async () => {
        const result = await asBot('delete', 'configmap', 'settings', '--dry-run=server');
        return result.code === 1 ? result : undefined;
      },
      CHANGE_BOUND_MS,
    );
    expect(deleted.value.stderr).toContain(
      'k8s.configmaps.delete for actor team-a/bot needs review (ESCALATE)',
    );
    const real = await asBot('delete', 'configmap', 'settings');
    expect(real.code).toBe(1);
    expect(real.stderr).toContain('needs review (ESCALATE)');
    await kubectlOk(cp(), ['-n', TEAM, 'get', 'configmap', 'settings']);
  });

  it("deleting the Delegations turns team-a's grants to DENY no_delegation, and their status says so", async () => {
    // The newer Delegation listing team-a takes over once the older one is gone.
    await kubectlOk(cp(), ['delete', 'delegation', 'team-a']);
    await conditionWhere(
      'Delegation team-a-late to take over team-a',
      ['delegation', 'team-a-late', undefined],
      (c) => c.type === 'Ready' && c.status === 'True',
    );
    await kubectlOk(cp(), ['delete', 'delegation', 'team-a-late']);
    const outside = await conditionWhere(
      "OutsideDelegation naming the missing Delegation on team-a's grant",
      ['namespacedactorgrants', 'bot', TEAM],
      (c) => c.type === 'OutsideDelegation' && c.message.includes('no Delegation covers namespace team-a'),
    );
    expect(outside.status).toBe('True');
    const policy = (await conditions('namespacedpolicies', 'careful')).find(
      (c) => c.type === 'OutsideDelegation',
    );
    expect(policy).toMatchObject({ status: 'True', reason: 'OutsideDelegation' });
    const proposed = await proposeAsBot('k8s.configmaps.create');
    expect(proposed.outcome).toBe('DENY');
    expect(await authorityCheckOf(proposed.decision_id)).toBe('no_delegation');
    const deleted = await auditEntries('delegation.deleted', () => true);
    expect(deleted.map((e) => [e.data.name, e.namespace])).toEqual(
      expect.arrayContaining([
        ['team-a', undefined],
        ['team-a-late', undefined],
      ]),
    );
    const created = await asBot('create', 'configmap', 'more');
    expect(created.code).toBe(1);
    expect(created.stderr).toContain('No Delegation covers namespace team-a');
  });
});
