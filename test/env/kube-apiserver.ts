import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { kubeApiserverVersion, resolveBinaries, type ServerVersion } from './binaries.js';
import { freePorts } from './free-ports.js';
import { kubeRequest, type KubeRequestOptions, type KubeResponse } from './kube-request.js';
import { startProcess, type ManagedProcess } from './managed-process.js';
import { makePki } from './pki.js';

export { ControlPlaneUnavailableError, type ServerVersion } from './binaries.js';
export type { KubeRequestOptions, KubeResponse } from './kube-request.js';

/**
 * A real etcd + kube-apiserver on free loopback ports, for integration tests
 * (what envtest does for Go operators). Binaries: see test/env/setup and docs/testing.md.
 */
export interface ControlPlane {
  /** https://127.0.0.1:<port> */
  readonly url: string;
  /** Bearer token of `admin` (group system:masters). */
  readonly token: string;
  /** A kubeconfig file for `admin`, usable with kubectl and `arbiter --kubeconfig`. */
  readonly kubeconfigPath: string;
  /** PEM of the CA that signed the serving certificate. */
  readonly caCert: string;
  readonly version: ServerVersion;
  /** Static token users (token auth file): admin plus the test users. */
  readonly users: Readonly<Record<string, TestUser>>;
  /** Temp directory holding data, keys and logs; removed by stop(). */
  readonly dir: string;
  /** A KubeConfig authenticating as one of `users` (default admin). */
  makeKubeConfig(user?: string): KubeConfig;
  /** A KubeConfig that acts as a ServiceAccount: admin's token with Impersonate-User. */
  serviceAccountKubeConfig(namespace: string, name: string): KubeConfig;
  /** A raw API call as `options.user` (default admin), e.g. request('GET', '/readyz'). */
  request<T = unknown>(
    method: string,
    path: string,
    options?: KubeRequestOptions & { user?: string },
  ): Promise<KubeResponse<T>>;
  /** Stops kube-apiserver only (etcd keeps the data): an outage. */
  stopApiServer(): Promise<void>;
  /** Starts kube-apiserver again on the same port and waits until /readyz is ok. */
  startApiServer(): Promise<void>;
  /** stopApiServer(), optionally wait `downtimeMs`, then startApiServer(). */
  restartApiServer(options?: { downtimeMs?: number }): Promise<void>;
  /** Last lines of a server's log, for failure messages. */
  logTail(server: 'etcd' | 'kube-apiserver', lines?: number): Promise<string>;
  /** Stops both servers and removes the temp directory. Safe to call twice. */
  stop(): Promise<void>;
}

export interface TestUser {
  token: string;
  groups: readonly string[];
}

export interface ControlPlaneOptions {
  /** Extra token users besides admin; default alice and bob, in no group. */
  users?: Record<string, { groups?: readonly string[] }>;
  /** Extra or overriding kube-apiserver flags, e.g. { 'min-request-timeout': '5' }. */
  apiServerFlags?: Record<string, string>;
  /** How long to wait for /readyz; default 90 s (the first start bootstraps RBAC). */
  readyTimeoutMs?: number;
}

const CLUSTER_NAME = 'arbiter-test';
const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
const DEFAULT_USERS: Record<string, { groups?: readonly string[] }> = { alice: {}, bob: {} };

/** Data on tmpfs when there is one: etcd fsyncs a lot, and these are throwaway clusters. */
async function makeTempDir(): Promise<string> {
  const base = process.env.ARBITER_TEST_TMPDIR ?? ((await isWritableDir('/dev/shm')) ? '/dev/shm' : tmpdir());
  return mkdtemp(join(base, 'arbiter-cp-'));
}

async function isWritableDir(path: string): Promise<boolean> {
  try {
    await rm(await mkdtemp(join(path, 'probe-')), { recursive: true });
    return true;
  } catch {
    return false;
  }
}

function token(): string {
  return randomBytes(24).toString('hex');
}

function csvField(value: string): string {
  return `"${value.replaceAll('"', '""')}"`;
}

async function waitUntil(
  what: string,
  processToWatch: ManagedProcess,
  timeoutMs: number,
  check: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (!processToWatch.isRunning()) {
      throw new Error(
        `${processToWatch.name} exited while waiting for ${what}. Log tail (${processToWatch.logPath}):\n` +
          (await processToWatch.logTail()),
      );
    }
    try {
      if (await check()) return;
    } catch (err) {
      lastError = err;
    }
    await sleep(200);
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}` +
      (lastError instanceof Error ? ` (last error: ${lastError.message})` : '') +
      `. Log tail (${processToWatch.logPath}):\n${await processToWatch.logTail()}`,
    { cause: lastError },
  );
}

export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const binaries = resolveBinaries();
  const version = await kubeApiserverVersion(binaries.kubeApiserver);
  const readyTimeoutMs = options.readyTimeoutMs ?? 90_000;
  const dir = await makeTempDir();
  const processes: ManagedProcess[] = [];
  let stopped = false;
  // A crashed test run must not leave data behind either.
  const removeDir = (): void => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeDir);

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    // kube-apiserver first: it would otherwise log etcd errors while shutting down.
    for (const server of [...processes].reverse()) await server.stop();
    process.removeListener('exit', removeDir);
    await rm(dir, { recursive: true, force: true });
  };

  try {
    const [etcdClientPort, etcdPeerPort, securePort] = (await freePorts(3)) as [number, number, number];
    const pki = await makePki(dir);
    const caCert = await readFile(pki.caCert, 'utf8');

    const users: Record<string, TestUser> = {
      admin: { token: token(), groups: ['system:masters'] },
    };
    for (const [name, user] of Object.entries(options.users ?? DEFAULT_USERS)) {
      users[name] = { token: token(), groups: [...(user.groups ?? [])] };
    }
    const tokenFile = join(dir, 'tokens.csv');
    await writeFile(
      tokenFile,
      Object.entries(users)
        .map(([name, user]) => [user.token, name, name, csvField(user.groups.join(','))].join(','))
        .join('\n') + '\n',
      { mode: 0o600 },
    );

    // --- etcd ---------------------------------------------------------------------------
    const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
    const peerUrl = `http://127.0.0.1:${etcdPeerPort}`;
    const etcd = startProcess({
      name: 'etcd',
      command: binaries.etcd,
      logPath: join(dir, 'etcd.log'),
      args: [
        '--name=default',
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=default=${peerUrl}`,
        '--initial-cluster-state=new',
        '--log-level=warn',
      ],
    });
    processes.push(etcd);
    await waitUntil('etcd /health', etcd, 30_000, async () => {
      const res = await fetch(`${etcdUrl}/health`);
      return res.ok && ((await res.json()) as { health?: string }).health === 'true';
    });

    // --- kube-apiserver -------------------------------------------------------------------
    const flags: Record<string, string> = {
      'etcd-servers': etcdUrl,
      'secure-port': String(securePort),
      'bind-address': '127.0.0.1',
      'advertise-address': '127.0.0.1',
      // Removed in 1.24; 1.20 would otherwise open an unauthenticated port 8080.
      ...(version.major === 1 && version.minor < 24 ? { 'insecure-port': '0' } : {}),
      'cert-dir': join(dir, 'certs'),
      'tls-cert-file': pki.servingCert,
      'tls-private-key-file': pki.servingKey,
      'service-account-issuer': SERVICE_ACCOUNT_ISSUER,
      'service-account-key-file': pki.serviceAccountPublicKey,
      'service-account-signing-key-file': pki.serviceAccountKey,
      'api-audiences': SERVICE_ACCOUNT_ISSUER,
      'token-auth-file': tokenFile,
      'authorization-mode': 'RBAC',
      'service-cluster-ip-range': '10.0.0.0/24',
      'allow-privileged': 'true',
      // No controller-manager mints service-account tokens here; pods need not wait for them.
      'disable-admission-plugins': 'ServiceAccount',
      profiling: 'false',
      ...options.apiServerFlags,
    };
    await mkdir(flags['cert-dir'] as string, { recursive: true });
    const url = `https://127.0.0.1:${securePort}`;
    const adminToken = users.admin!.token;
    let apiserver: ManagedProcess | undefined;

    const startApiServer = async (): Promise<void> => {
      if (apiserver?.isRunning()) return;
      const started = startProcess({
        name: 'kube-apiserver',
        command: binaries.kubeApiserver,
        logPath: join(dir, 'kube-apiserver.log'),
        args: Object.entries(flags).map(([flag, value]) => `--${flag}=${value}`),
      });
      apiserver = started;
      processes.push(started);
      // Ready, and the bootstrap controller has created the default namespace, which
      // /readyz does not wait for (seen missing right after a fast first start).
      await waitUntil(`kube-apiserver ${url}/readyz`, started, readyTimeoutMs, async () => {
        const get = (path: string) =>
          kubeRequest({ url, caCert, token: adminToken }, 'GET', path, { timeoutMs: 2_000 });
        return (
          (await get('/readyz')).status === 200 && (await get('/api/v1/namespaces/default')).status === 200
        );
      });
    };

    const stopApiServer = async (): Promise<void> => {
      const running = apiserver;
      if (!running) return;
      await running.stop();
      processes.splice(processes.indexOf(running), 1);
      apiserver = undefined;
    };

    await startApiServer();

    const kubeConfigFor = (userName: string, userToken: string, impersonate?: string): KubeConfig => {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [
          {
            name: CLUSTER_NAME,
            server: url,
            caData: Buffer.from(caCert).toString('base64'),
            skipTLSVerify: false,
          },
        ],
        users: [
          { name: userName, token: userToken, ...(impersonate ? { impersonateUser: impersonate } : {}) },
        ],
        contexts: [{ name: userName, cluster: CLUSTER_NAME, user: userName }],
        currentContext: userName,
      });
      return kc;
    };

    const makeKubeConfig = (user = 'admin'): KubeConfig => {
      const found = users[user];
      if (!found) {
        throw new Error(`no test user ${JSON.stringify(user)}; known: ${Object.keys(users).join(', ')}`);
      }
      return kubeConfigFor(user, found.token);
    };

    const kubeconfigPath = join(dir, 'admin.kubeconfig');
    await writeFile(kubeconfigPath, makeKubeConfig('admin').exportConfig(), { mode: 0o600 });

    return {
      url,
      token: adminToken,
      kubeconfigPath,
      caCert,
      version,
      users,
      dir,
      makeKubeConfig,
      serviceAccountKubeConfig: (namespace, name) => {
        const username = `system:serviceaccount:${namespace}:${name}`;
        return kubeConfigFor(username, adminToken, username);
      },
      request: (method, path, { user = 'admin', ...options } = {}) => {
        const found = users[user];
        if (!found) throw new Error(`no test user ${JSON.stringify(user)}`);
        return kubeRequest({ url, caCert, token: found.token }, method, path, options);
      },
      stopApiServer,
      startApiServer,
      async restartApiServer({ downtimeMs = 0 } = {}) {
        await stopApiServer();
        if (downtimeMs > 0) await sleep(downtimeMs);
        await startApiServer();
      },
      async logTail(server, lines) {
        const log = join(dir, server === 'etcd' ? 'etcd.log' : 'kube-apiserver.log');
        const text = await readFile(log, 'utf8').catch(() => '');
        return text
          .trimEnd()
          .split('\n')
          .slice(-(lines ?? 30))
          .join('\n');
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
