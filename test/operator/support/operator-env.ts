import { setTimeout as sleep } from 'node:timers/promises';
import { CONTROLLER_NAMESPACE } from '../../env/controller-rbac.js';
import {
  spawnArbiter,
  EXAMPLE_KEYS,
  call,
  tempDir,
  type ArbiterProcess,
} from '../../support/arbiter-process.js';

export {
  API_BASE,
  CONTROLLER_NAMESPACE,
  PLURAL,
  RBAC_FILE,
  governanceObject as object,
  installControllerRbac,
} from '../../env/controller-rbac.js';

export interface ControllerOptions {
  kubeconfig: string;
  identity: string;
  redisUrl?: string;
  extraArgs?: string[];
  /** An API keys file other than the examples'. */
  apiKeys?: string;
}

/**
 * `arbiter serve --kubeconfig` as users run it, on a free port; resolves once it listens.
 * (startArbiter always passes --manifests, which --kubeconfig excludes.)
 */
export async function startController(options: ControllerOptions): Promise<ArbiterProcess> {
  const dataDir = await tempDir('arbiter-operator-');
  const args = [
    'serve',
    '--kubeconfig',
    options.kubeconfig,
    '--lease-namespace',
    CONTROLLER_NAMESPACE,
    '--identity',
    options.identity,
    '--api-keys',
    options.apiKeys ?? EXAMPLE_KEYS,
    '--data-dir',
    dataDir,
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    ...(options.redisUrl ? ['--redis', options.redisUrl] : []),
    ...(options.extraArgs ?? []),
  ];
  return spawnArbiter(args, { dataDir, manifestsDir: '' });
}

/**
 * Polls `probe` until it returns a value (not undefined), within `timeoutMs`, and returns it.
 * The bound only keeps a test from hanging: how fast something happens is bench/'s to measure.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 5_000,
): Promise<{ value: T }> {
  const started = Date.now();
  let last: unknown;
  while (Date.now() - started < timeoutMs) {
    try {
      const value = await probe();
      if (value !== undefined) return { value };
    } catch (err) {
      last = err;
    }
    await sleep(50);
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? ` (last error: ${last.message})` : ''}`,
  );
}

/** The decision outcome for one proposal, through the real HTTP API. */
export async function outcomeOf(
  arbiter: ArbiterProcess,
  actor: string,
  capability: string,
  parameters: Record<string, unknown> = {},
): Promise<string> {
  const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
    key: 'dev-admin-key',
    body: { actor: { id: actor, type: 'automation' }, action: { capability, parameters } },
  });
  if (res.status !== 200) throw new Error(`propose: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return String(res.body.outcome);
}
