import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { freePort } from '../../env/free-ports.js';
import type { ControlPlane } from '../../env/kube-apiserver.js';
import { runKubectl, type KubectlResult } from '../../env/kubectl.js';
import { call, KEYS, REPO, type ArbiterProcess } from '../../support/arbiter-process.js';
import { eventually, installControllerRbac, startController } from '../../operator/support/operator-env.js';

export const ADMISSION_EXAMPLES = join(REPO, 'examples/admission');
export const SANDBOX = 'agents-sandbox';
export const AGENT = `system:serviceaccount:${SANDBOX}:agent`;
export const ACTOR = 'sandbox-agent';

export function kubectl(cp: ControlPlane, args: string[], options: { as?: string; stdin?: string } = {}) {
  return runKubectl(cp, args, options);
}

/** kubectl that must succeed. */
export async function kubectlOk(
  cp: ControlPlane,
  args: string[],
  options: { as?: string; stdin?: string } = {},
) {
  const result = await runKubectl(cp, args, options);
  expect(result.code, `kubectl ${args.join(' ')}:\n${result.stderr}`).toBe(0);
  return result;
}

export async function applyExample(cp: ControlPlane, file: string): Promise<KubectlResult> {
  // Servers before 1.25 lack CEL rules: kubectl's client-side validation would refuse our CRDs' fields.
  return kubectlOk(cp, ['apply', '--validate=false', '-f', join(ADMISSION_EXAMPLES, file)]);
}

export async function exampleText(file: string): Promise<string> {
  return readFile(join(ADMISSION_EXAMPLES, file), 'utf8');
}

/** The controller with the webhooks served on a free port and reached by URL (outside the cluster). */
export async function startWebhookController(
  cp: ControlPlane,
  options: { identity: string; extraArgs?: string[]; port?: number; kubeconfig?: string } = {
    identity: 'arbiter-0',
  },
): Promise<{ arbiter: ArbiterProcess; port: number; kubeconfig: string }> {
  const kubeconfig = options.kubeconfig ?? (await installControllerRbac(cp));
  const port = options.port ?? (await freePort());
  const arbiter = await startController({
    kubeconfig,
    identity: options.identity,
    extraArgs: [
      '--admission-url',
      `https://127.0.0.1:${port}`,
      '--admission-port',
      String(port),
      ...(options.extraArgs ?? []),
    ],
  });
  return { arbiter, port, kubeconfig };
}

/** Waits until the API server sends this identity's requests to the governance webhook. */
export async function untilGoverned(
  cp: ControlPlane,
  probe: () => Promise<KubectlResult>,
  timeoutMs = 20_000,
) {
  await eventually(
    'the governance webhook to be in effect',
    async () => {
      const result = await probe();
      return result.stderr.includes('admission webhook') ? result : undefined;
    },
    timeoutMs,
  );
}

export async function decisionOf(arbiter: ArbiterProcess, id: string) {
  const res = await call(arbiter.url, 'GET', `/api/v1/governance/decisions/${id}`, { key: KEYS.admin });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

export async function decisionCount(arbiter: ArbiterProcess): Promise<number> {
  const res = await call(arbiter.url, 'GET', '/api/v1/audit/log?event_type=governance.decision&limit=1', {
    key: KEYS.admin,
  });
  expect(res.status).toBe(200);
  return res.body.total as number;
}

/** The decision id a refusal names as its own, `(decision ID)`; its reason may name others. */
export function decisionIdIn(text: string): string {
  const match = /\(decision ([0-9a-f-]{36})\)/.exec(text);
  if (!match) throw new Error(`no decision id in: ${text}`);
  return match[1]!;
}
