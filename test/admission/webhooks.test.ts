import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { installCrds } from '../env/install-crds.js';
import { call, KEYS, removeDir, type ArbiterProcess } from '../support/arbiter-process.js';
import { eventually } from '../operator/support/operator-env.js';
import {
  ACTOR,
  AGENT,
  SANDBOX,
  applyExample,
  decisionCount,
  decisionIdIn,
  decisionOf,
  exampleText,
  kubectl,
  kubectlOk,
  startWebhookController,
  untilGoverned,
} from './support/admission-env.js';

/**
 * Both webhooks through a real kube-apiserver and a real kubectl, the controller as its
 * own process under the least-privilege RBAC of deploy/rbac, serving the webhooks by URL.
 * The walkthrough of the README (examples/admission) as a user runs it.
 */
describeWithControlPlane('admission webhooks', (controlPlane) => {
  let arbiter: ArbiterProcess;
  const cp = () => controlPlane();
  const asAgent = (...args: string[]) => kubectl(cp(), ['-n', SANDBOX, ...args], { as: AGENT });
  const api = (method: string, path: string, key: string = KEYS.admin, body?: unknown) =>
    call(arbiter.url, method, `/api/v1${path}`, { key, ...(body === undefined ? {} : { body }) });

  beforeAll(async () => {
    await installCrds(cp());
    for (const file of ['01-sandbox.yaml', '02-capabilities.yaml', '04-policy.yaml'])
      await applyExample(cp(), file);
    // First the grant without delete: the agent may create and update ConfigMaps only.
    const withoutDelete = (await exampleText('03-grant.yaml')).replace(
      '    - capability: k8s.configmaps.delete\n',
      '',
    );
    await kubectlOk(cp(), ['apply', '--validate=false', '-f', '-'], { stdin: withoutDelete });
    await kubectlOk(cp(), ['-n', SANDBOX, 'create', 'deployment', 'web', '--image=nginx']);
    ({ arbiter } = await startWebhookController(cp(), { identity: 'arbiter-0' }));
    // Scaling beyond 10 replicas is a DENY: once the API server asks the webhook, it says so.
    await untilGoverned(cp(), () =>
      asAgent('scale', 'deployment', 'web', '--replicas=20', '--dry-run=server'),
    );
  }, 90_000);

  afterAll(async () => {
    await arbiter?.stop();
    if (arbiter) await removeDir(arbiter.dataDir);
  });

  it('refuses a Policy whose condition does not compile at kubectl apply, with the compile error', async () => {
    const broken = `apiVersion: governance.arbiter.dev/v1alpha1
kind: Policy
metadata:
  name: broken
spec:
  rules:
    - capability: k8s.configmaps.create
      condition: "parameters.name =="
      outcome: DENY
`;
    const result = await kubectl(cp(), ['apply', '--validate=false', '-f', '-'], { stdin: broken });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'admission webhook "configuration.governance.arbiter.dev" denied the request',
    );
    expect(result.stderr).toContain(
      'InvalidCondition: policy broken, rule 0 (capability k8s.configmaps.create): the condition does not compile',
    );
    const stored = await kubectl(cp(), ['get', 'policy', 'broken']);
    expect(stored.code).toBe(1); // never stored
  });

  it("refuses a Policy whose condition does not type-check, against its capability's parameter schema too", async () => {
    const policy = (
      name: string,
      capability: string,
      condition: string,
    ) => `apiVersion: governance.arbiter.dev/v1alpha1
kind: Policy
metadata:
  name: ${name}
spec:
  rules:
    - capability: ${capability}
      condition: ${JSON.stringify(condition)}
      outcome: DENY
`;
    const apply = (stdin: string) => kubectl(cp(), ['apply', '--validate=false', '-f', '-'], { stdin });
    const mixed = await apply(policy('mixed', 'k8s.configmaps.create', '1 + "a" == 2'));
    expect(mixed.code).toBe(1);
    expect(mixed.stderr).toContain(
      'InvalidCondition: policy mixed, rule 0 (capability k8s.configmaps.create): the condition does not compile: ' +
        "<input>:1:2: found no matching overload for '+' applied to (int, string)",
    );
    await kubectlOk(cp(), ['apply', '--validate=false', '-f', '-'], {
      stdin: `apiVersion: governance.arbiter.dev/v1alpha1
kind: Capability
metadata:
  name: reports-query
spec:
  name: reports.query
  riskLevel: low
  parameterSchema:
    type: object
    properties:
      query: {type: string}
`,
    });
    await eventually('the capability to reach the index', async () => {
      const listed = await api('GET', '/capabilities?limit=200');
      return listed.body.capabilities?.some((c: { name: string }) => c.name === 'reports.query')
        ? true
        : undefined;
    });
    const asBool = await apply(policy('query-as-bool', 'reports.query', 'parameters.query'));
    expect(asBool.code).toBe(1);
    expect(asBool.stderr).toContain(
      'InvalidCondition: policy query-as-bool, rule 0 (capability reports.query): the condition does not compile: ' +
        'a condition must be a bool, but this one is a value of type string',
    );
    for (const name of ['mixed', 'query-as-bool'])
      expect((await kubectl(cp(), ['get', 'policy', name])).code).toBe(1); // never stored
    const typed = await apply(policy('query-guard', 'reports.query', "parameters.query.startsWith('drop')"));
    expect(typed.code, typed.stderr).toBe(0);
    await eventually('the policy to reach the index', async () => {
      const res = await api('GET', '/policies/query-guard');
      return res.status === 200 ? true : undefined;
    });
    // A schema under which that condition cannot work would take the policy out of use.
    const retyped = await kubectl(cp(), [
      'patch',
      'capability',
      'reports-query',
      '--type=merge',
      '-p',
      '{"spec":{"parameterSchema":{"properties":{"query":{"type":"integer"}}}}}',
    ]);
    expect(retyped.code).toBe(1);
    expect(retyped.stderr).toContain(
      'InvalidSchema: spec.parameterSchema would take policy query-guard out of use (policy query-guard, rule 0',
    );
  });

  it('accepts a valid Policy, and one naming an unknown capability with a warning kubectl prints', async () => {
    const valid = await kubectl(cp(), ['apply', '--validate=false', '-f', '-'], {
      stdin: `apiVersion: governance.arbiter.dev/v1alpha1
kind: Policy
metadata:
  name: quiet-hours
spec:
  rules:
    - capability: k8s.configmaps.update
      condition: "parameters.name == 'frozen'"
      outcome: DENY
`,
    });
    expect(valid.code, valid.stderr).toBe(0);
    expect(valid.stderr).not.toContain('Warning');
    const ahead = await kubectl(cp(), ['apply', '--validate=false', '-f', '-'], {
      stdin: `apiVersion: governance.arbiter.dev/v1alpha1
kind: Policy
metadata:
  name: ahead-of-time
spec:
  rules:
    - capability: k8s.secrets.create
      outcome: DENY
`,
    });
    expect(ahead.code, ahead.stderr).toBe(0);
    expect(ahead.stderr).toContain(
      'Warning: Policy ahead-of-time: rules name capabilities that are not registered: k8s.secrets.create',
    );
  });

  it('allows a granted create and records it with the Kubernetes request', async () => {
    const before = await decisionCount(arbiter);
    const created = await asAgent('create', 'configmap', 'app-settings', '--from-literal=mode=fast');
    expect(created.code, created.stderr).toBe(0);
    expect(await decisionCount(arbiter)).toBe(before + 1);
    const list = await api(
      'GET',
      `/governance/decisions?actor_id=${ACTOR}&capability=k8s.configmaps.create&limit=1`,
    );
    const decision = list.body.decisions[0];
    expect(decision.outcome).toBe('ALLOW');
    expect(decision.audit).toMatchObject({
      source: 'admission',
      principal: `kubernetes:${AGENT}`,
      kubernetes: {
        username: AGENT,
        operation: 'create',
        group: '',
        resource: 'configmaps',
        namespace: SANDBOX,
        name: 'app-settings',
      },
    });
    expect(decision.audit.kubernetes.uid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('denies a delete without a grant, naming the reason and the decision', async () => {
    const denied = await asAgent('delete', 'configmap', 'app-settings');
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain(
      'Arbiter denied k8s.configmaps.delete for actor sandbox-agent: Actor sandbox-agent has no grant for capability k8s.configmaps.delete.',
    );
    const decision = await decisionOf(arbiter, decisionIdIn(denied.stderr));
    expect(decision).toMatchObject({ outcome: 'DENY', audit: { source: 'admission' } });
    await kubectlOk(cp(), ['-n', SANDBOX, 'get', 'configmap', 'app-settings']);
  });

  it('escalates a delete; once approved, the same request passes once, and the next one waits again', async () => {
    await applyExample(cp(), '03-grant.yaml');
    await eventually('the delete grant to reach the index', async () => {
      const grants = await api('GET', `/actors/${ACTOR}/grants`);
      return grants.body.grants?.some((g: { capability: string }) => g.capability === 'k8s.configmaps.delete')
        ? true
        : undefined;
    });
    const first = await asAgent('delete', 'configmap', 'app-settings');
    expect(first.code).toBe(1);
    expect(first.stderr).toContain('k8s.configmaps.delete for actor sandbox-agent needs review (ESCALATE)');
    const id = decisionIdIn(first.stderr);
    expect(first.stderr).toContain(`POST /api/v1/governance/decisions/${id}/approve`);
    expect((await decisionOf(arbiter, id)).audit.status).toBe('pending');

    const approved = await api('POST', `/governance/decisions/${id}/approve`, KEYS.reviewer, {
      comment: 'stale config',
    });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.confirmation_token).toBeUndefined();

    const retry = await asAgent('delete', 'configmap', 'app-settings');
    expect(retry.code, retry.stderr).toBe(0);
    expect((await kubectl(cp(), ['-n', SANDBOX, 'get', 'configmap', 'app-settings'])).code).toBe(1);
    const used = await decisionOf(arbiter, id);
    expect(used.audit.reviews.map((r: { action: string }) => r.action)).toEqual([
      'approve',
      'confirmation_used',
    ]);
    const allowed = await api(
      'GET',
      `/governance/decisions?actor_id=${ACTOR}&capability=k8s.configmaps.delete&outcome=ALLOW&limit=1`,
    );
    expect(allowed.body.decisions[0].reason).toContain(`approved by reviewer (decision ${id})`);

    await asAgent('create', 'configmap', 'app-settings', '--from-literal=mode=fast');
    const again = await asAgent('delete', 'configmap', 'app-settings');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('needs review (ESCALATE)');
    expect(again.stderr).toContain(`the approval of decision ${id} was already used`);
    expect(decisionIdIn(again.stderr)).not.toBe(id);
  });

  it('leaves unbound users and ServiceAccounts alone, with no audit entry', async () => {
    await kubectlOk(cp(), ['-n', SANDBOX, 'create', 'serviceaccount', 'helper']);
    await kubectlOk(cp(), [
      '-n',
      SANDBOX,
      'create',
      'rolebinding',
      'unbound',
      '--role=agent',
      '--user=alice',
      `--serviceaccount=${SANDBOX}:helper`,
    ]);
    const before = await decisionCount(arbiter);
    for (const as of ['alice', `system:serviceaccount:${SANDBOX}:helper`]) {
      const name = `free-${as.length}`;
      await kubectlOk(cp(), ['-n', SANDBOX, 'create', 'configmap', name], { as });
      await kubectlOk(cp(), ['-n', SANDBOX, 'delete', 'configmap', name], { as });
    }
    expect(await decisionCount(arbiter)).toBe(before);
    const metrics = await call(arbiter.url, 'GET', '/metrics');
    expect(metrics.body).toMatch(
      /arbiter_admission_requests_total\{webhook="governance",operation="DELETE",outcome="not_governed"\} [1-9]/,
    );
  });

  it('answers --dry-run=server as the real request would, and leaves no trace', async () => {
    const before = await decisionCount(arbiter);
    const create = await asAgent('create', 'configmap', 'dry', '--dry-run=server');
    expect(create.code, create.stderr).toBe(0);
    const scale = await asAgent('scale', 'deployment', 'web', '--replicas=20', '--dry-run=server');
    expect(scale.code).toBe(1);
    expect(scale.stderr).toContain('Arbiter denied k8s.deployments.scale.update');
    expect(scale.stderr).toContain('dry run: no decision was recorded');
    const del = await asAgent('delete', 'configmap', 'app-settings', '--dry-run=server');
    expect(del.code).toBe(1);
    expect(del.stderr).toContain('needs review (ESCALATE)');
    expect(await decisionCount(arbiter)).toBe(before);
    expect((await kubectl(cp(), ['-n', SANDBOX, 'get', 'configmap', 'dry'])).code).toBe(1);
  });

  it('lets the bound ServiceAccount propose for its own actor over the HTTP API, and only for it', async () => {
    // kubectl 1.20 has no `create token`: the TokenRequest API, as the kubelet uses it.
    const res = await cp().request<any>('POST', `/api/v1/namespaces/${SANDBOX}/serviceaccounts/agent/token`, {
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 600 },
      },
    });
    expect(res.status, res.text).toBe(201);
    const bearer = res.body.status.token as string;
    const propose = (actor: string) =>
      call(arbiter.url, 'POST', '/api/v1/governance/propose', {
        key: bearer,
        body: {
          actor: { id: actor, type: 'ai-agent' },
          action: { capability: 'k8s.configmaps.create', parameters: { namespace: SANDBOX } },
        },
      });
    const own = await propose(ACTOR);
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body.outcome).toBe('ALLOW');
    const other = await propose('agent-001');
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('ACTOR_MISMATCH');
    // RBAC lets it read nowhere: the log is filtered to what it may see, which is nothing.
    const read = await call(arbiter.url, 'GET', '/api/v1/audit/log', { key: bearer });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ entries: [], total: 0 });
    const verify = await call(arbiter.url, 'GET', '/api/v1/audit/verify', { key: bearer });
    expect(verify.status).toBe(403);
  });
});
