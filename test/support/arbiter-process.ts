import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = join(REPO, 'dist/cli/main.js');
export const EXAMPLE_KEYS = join(REPO, 'examples/api-keys.yaml');
export const EXAMPLE_MANIFESTS = join(REPO, 'examples/manifests');

export const KEYS = {
  admin: 'dev-admin-key',
  agent: 'dev-agent-key',
  reviewer: 'dev-reviewer-key',
  auditor: 'dev-auditor-key',
} as const;

export interface ArbiterProcess {
  url: string;
  port: number;
  dataDir: string;
  manifestsDir: string;
  logs: string[];
  child: ChildProcess;
  /** SIGTERM and wait for exit: the graceful path. */
  stop(): Promise<number | null>;
  /** SIGKILL: a crash. */
  kill(): Promise<void>;
}

export interface StartOptions {
  dataDir?: string;
  manifestsDir?: string;
  apiKeys?: string;
  args?: string[];
}

/** A temp copy of the example manifests, so a test may edit its own. */
export async function tempManifests(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'arbiter-manifests-'));
  await cp(EXAMPLE_MANIFESTS, dir, { recursive: true });
  return dir;
}

export async function tempDir(prefix = 'arbiter-data-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Starts `arbiter serve` as users do, on a free port, and waits until it listens. */
export async function startArbiter(options: StartOptions = {}): Promise<ArbiterProcess> {
  const dataDir = options.dataDir ?? (await tempDir());
  const manifestsDir = options.manifestsDir ?? (await tempManifests());
  return spawnArbiter(serveArgs({ ...options, dataDir, manifestsDir }), { dataDir, manifestsDir }, 15_000);
}

/** The arguments of `arbiter serve` as startArbiter() passes them (port 0 unless given). */
export function serveArgs(
  options: StartOptions & { dataDir: string; manifestsDir: string; port?: number },
): string[] {
  return [
    'serve',
    '--manifests',
    options.manifestsDir,
    '--api-keys',
    options.apiKeys ?? EXAMPLE_KEYS,
    '--data-dir',
    options.dataDir,
    '--port',
    String(options.port ?? 0),
    '--host',
    '127.0.0.1',
    ...(options.args ?? []),
  ];
}

/**
 * Runs `node dist/cli/main.js <serveArgs>` (which must include `--port 0`) and resolves
 * once it logs the port it listens on; fails with its log if it exits or stays silent.
 */
export async function spawnArbiter(
  serveArgs: string[],
  dirs: { dataDir: string; manifestsDir: string },
  startTimeoutMs = 30_000,
): Promise<ArbiterProcess> {
  const child = spawn(process.execPath, [CLI, ...serveArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  createInterface({ input: child.stderr }).on('line', (line) => logs.push(line));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`arbiter did not start:\n${logs.join('\n')}`)),
      startTimeoutMs,
    );
    createInterface({ input: child.stdout }).on('line', (line) => {
      logs.push(line);
      const parsed = safeJson(line);
      if (typeof parsed?.port === 'number' && String(parsed.msg).startsWith('arbiter listening')) {
        clearTimeout(timer);
        resolve(parsed.port);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`arbiter exited with ${code}:\n${logs.join('\n')}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    ...dirs,
    logs,
    child,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

function safeJson(line: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: any;
}

/** One HTTP call with a key; the body is parsed as JSON when it is JSON. */
export async function call(
  base: string,
  method: string,
  path: string,
  options: {
    key?: string;
    body?: unknown;
    rawBody?: string;
    headers?: Record<string, string>;
    /** Abort after this long (the call rejects): a request may never be answered. */
    timeoutMs?: number;
  } = {},
): Promise<CallResult> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(base + path, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
    ...(options.timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(options.timeoutMs) }),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

/**
 * One server for a test file: started before its tests, stopped and cleaned up after.
 * The returned object is filled in by the beforeAll hook.
 */
export function useArbiter(options: StartOptions = {}): ArbiterProcess {
  const arbiter = {} as ArbiterProcess;
  beforeAll(async () => {
    Object.assign(arbiter, await startArbiter(options));
  });
  afterAll(async () => {
    if (!arbiter.child) return;
    await arbiter.stop();
    await removeDir(arbiter.dataDir);
    await removeDir(arbiter.manifestsDir);
  });
  return arbiter;
}
