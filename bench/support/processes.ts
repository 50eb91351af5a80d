import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { freePort } from '../../test/env/free-ports.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

/** The repository root (bench/ runs compiled from node_modules/.cache/arbiter-bench/bench/). */
export const REPO = findRepo();
export const CLI = join(REPO, 'dist/cli/main.js');
export const EXAMPLE_MANIFESTS = join(REPO, 'examples/manifests');
export const EXAMPLE_KEYS = join(REPO, 'examples/api-keys.yaml');
/** The compiled bench folder, for child processes of the bench itself. */
export const BENCH_OUT = fileURLToPath(new URL('../', import.meta.url));

function findRepo(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const marker = `${join('node_modules', '.cache')}`;
  const at = here.indexOf(marker);
  return at >= 0 ? here.slice(0, at) : fileURLToPath(new URL('../../', import.meta.url));
}

export interface ServerProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  logPath: string;
  /** VmRSS of the process in MiB. */
  rssMiB(): Promise<number>;
  stop(): Promise<void>;
}

export async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
  return kb ? Number(kb) / 1024 : Number.NaN;
}

export interface ServerOptions {
  name: string;
  /** The executable: Node for our servers, a binary for a peer such as Cerbos. */
  command: string;
  args: string[];
  port: number;
  readyPath: string;
  timeoutMs?: number;
  /** Added to this process's environment. */
  env?: Record<string, string>;
}

/**
 * Starts a server process with its output in a log file (a pipe nobody drains would block
 * it) and waits until `readyPath` answers 200.
 */
export async function startServer(options: ServerOptions): Promise<ServerProcess> {
  const dir = await tempDir(`arbiter-bench-${options.name}-`);
  const logPath = join(dir, 'server.log');
  const fd = openSync(logPath, 'a');
  const child = spawn(options.command, options.args, {
    stdio: ['ignore', fd, fd],
    cwd: REPO,
    ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
  });
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`${options.name} exited: ${(await readFile(logPath, 'utf8')).slice(-2000)}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${options.name} not ready: ${(await readFile(logPath, 'utf8')).slice(-2000)}`);
    }
    const status = await fetch(url + options.readyPath).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    await sleep(100);
  }
  return {
    url,
    pid: child.pid!,
    child,
    logPath,
    rssMiB: () => rssMiB(child.pid!),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A Node server (`node [nodeArgs] args`), as `startServer` starts it. */
export async function startNodeServer(
  options: Omit<ServerOptions, 'command'> & { nodeArgs?: string[] },
): Promise<ServerProcess> {
  const { nodeArgs = [], ...rest } = options;
  return startServer({ ...rest, command: process.execPath, args: [...nodeArgs, ...rest.args] });
}

export interface ArbiterOptions {
  manifests?: string;
  kubeconfig?: string;
  redisUrl?: string;
  apiKeys?: string;
  extraArgs?: string[];
  timeoutMs?: number;
  nodeArgs?: string[];
  env?: Record<string, string>;
}

/** `arbiter serve` from dist/, auth on, with the per-key rate limit out of the way of the load. */
export async function startArbiter(options: ArbiterOptions): Promise<ServerProcess & { dataDir: string }> {
  const port = await freePort();
  const dataDir = await tempDir('arbiter-bench-data-');
  const source = options.kubeconfig
    ? ['--kubeconfig', options.kubeconfig]
    : ['--manifests', options.manifests ?? EXAMPLE_MANIFESTS];
  const server = await startNodeServer({
    name: 'arbiter',
    port,
    readyPath: '/readyz',
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.nodeArgs ? { nodeArgs: options.nodeArgs } : {}),
    ...(options.env ? { env: options.env } : {}),
    args: [
      CLI,
      'serve',
      ...source,
      '--api-keys',
      options.apiKeys ?? EXAMPLE_KEYS,
      '--data-dir',
      dataDir,
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--key-rate-limit',
      '1000000000',
      '--key-burst',
      '1000000000',
      ...(options.redisUrl ? ['--redis', options.redisUrl] : []),
      ...(options.extraArgs ?? []),
    ],
  });
  return { ...removingOnStop(server, dataDir), dataDir };
}

/** The server, whose stop also removes a folder it used. */
export function removingOnStop<S extends ServerProcess>(server: S, dir: string): S {
  return {
    ...server,
    async stop() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The framework's ceiling: express parsing the same JSON body and answering fixed JSON. */
export async function startBaseline(
  options: { nodeArgs?: string[]; env?: Record<string, string> } = {},
): Promise<ServerProcess> {
  const port = await freePort();
  return startNodeServer({
    ...options,
    name: 'baseline',
    port,
    readyPath: '/healthz',
    args: [join(BENCH_OUT, 'baseline-server.js'), String(port)],
  });
}

export { freePort };
