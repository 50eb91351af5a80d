import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Where the control-plane binaries come from, in the order test/env/setup uses:
 * ARBITER_KUBE_APISERVER / ARBITER_ETCD / ARBITER_KUBECTL, then the ARBITER_TEST_ASSETS
 * directory (like envtest's KUBEBUILDER_ASSETS), then the cache setup builds into, then
 * PATH (etcd and kube-apiserver only).
 */
export interface ControlPlaneBinaries {
  kubeApiserver: string;
  etcd: string;
  /**
   * A real kubectl (Debian's kubernetes-client 1.20.2 by default). Never taken from PATH:
   * /usr/bin/kubectl may be Google Cloud SDK's dispatcher, which CI does not have.
   */
  kubectl: string;
}

export class ControlPlaneUnavailableError extends Error {
  readonly code = 'CONTROL_PLANE_UNAVAILABLE';
}

export function testAssetsCache(env: NodeJS.ProcessEnv = process.env): string {
  if (env.ARBITER_TEST_CACHE) return env.ARBITER_TEST_CACHE;
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return join(base, 'arbiter-test-assets');
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(command: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

function resolveOne(
  command: string,
  explicitVar: string,
  env: NodeJS.ProcessEnv,
  { searchPath }: { searchPath: boolean },
): { path?: string; tried: string[] } {
  const tried: string[] = [];
  const explicit = env[explicitVar];
  if (explicit) {
    if (isExecutable(explicit)) return { path: explicit, tried };
    throw new ControlPlaneUnavailableError(`${explicitVar}=${explicit} is not an executable file.`);
  }
  const candidates = [
    ...(env.ARBITER_TEST_ASSETS ? [join(env.ARBITER_TEST_ASSETS, command)] : []),
    join(testAssetsCache(env), 'bin', command),
  ];
  for (const candidate of candidates) {
    tried.push(candidate);
    if (isExecutable(candidate)) return { path: candidate, tried };
  }
  if (!searchPath) return { tried };
  tried.push(`${command} on PATH`);
  return { path: onPath(command, env), tried };
}

export function resolveBinaries(env: NodeJS.ProcessEnv = process.env): ControlPlaneBinaries {
  const apiserver = resolveOne('kube-apiserver', 'ARBITER_KUBE_APISERVER', env, { searchPath: true });
  const etcd = resolveOne('etcd', 'ARBITER_ETCD', env, { searchPath: true });
  const kubectl = resolveOne('kubectl', 'ARBITER_KUBECTL', env, { searchPath: false });
  const missing = [
    ...(apiserver.path ? [] : [`kube-apiserver (looked in: ${apiserver.tried.join(', ')})`]),
    ...(etcd.path ? [] : [`etcd (looked in: ${etcd.tried.join(', ')})`]),
    ...(kubectl.path ? [] : [`kubectl (looked in: ${kubectl.tried.join(', ')}; never PATH)`]),
  ];
  if (!apiserver.path || !etcd.path || !kubectl.path) {
    throw new ControlPlaneUnavailableError(
      `The integration tests need a real etcd, kube-apiserver and kubectl, and these are missing:\n` +
        missing.map((line) => `  - ${line}`).join('\n') +
        `\nRun \`bash test/env/setup\` once (installs etcd, builds kube-apiserver 1.20 from Debian's ` +
        `source package and fetches kubectl 1.20 from kubernetes-client into ${testAssetsCache(env)}, ` +
        `a few minutes), or point ARBITER_KUBE_APISERVER, ARBITER_ETCD and ARBITER_KUBECTL (or ` +
        `ARBITER_TEST_ASSETS, a directory holding all three) at your own binaries. See docs/testing.md.`,
    );
  }
  return { kubeApiserver: apiserver.path, etcd: etcd.path, kubectl: kubectl.path };
}

export interface ServerVersion {
  major: number;
  minor: number;
  gitVersion: string;
}

/** Parses `Kubernetes v1.20.2` (kube-apiserver --version). */
export async function kubeApiserverVersion(binary: string): Promise<ServerVersion> {
  const { stdout } = await run(binary, ['--version']);
  const match = /v(\d+)\.(\d+)\.\S*/.exec(stdout);
  if (!match) throw new Error(`cannot read the version of ${binary} from ${JSON.stringify(stdout)}`);
  return { major: Number(match[1]), minor: Number(match[2]), gitVersion: match[0] };
}
