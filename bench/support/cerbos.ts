import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freePorts } from '../../test/env/free-ports.js';
import { removingOnStop, REPO, startServer, tempDir, type ServerProcess } from './processes.js';

const run = promisify(execFile);

/** Cerbos's official server binary, published on npm for each platform. */
export const CERBOS_VERSION = '0.55.0';
const CERBOS_PACKAGE = '@cerbos/cerbos-linux-x64';
const CACHE = join(REPO, 'node_modules/.cache/arbiter-bench/cerbos');
const FIXTURES = join(REPO, 'bench/fixtures/same-question/cerbos');
export const CHECK_PATH = '/api/check/resources';

/**
 * The Cerbos binary, fetched once with `npm pack` into the bench cache (about 100 MB) and
 * reused from there. A bench-time install keeps it out of `npm install` for everyone else.
 */
export async function installCerbos(): Promise<string> {
  const binary = join(CACHE, `cerbos-${CERBOS_VERSION}`);
  if (await isExecutable(binary)) return binary;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `the Cerbos baseline needs linux-x64 (${CERBOS_PACKAGE}); this is ${process.platform}-${process.arch}`,
    );
  }
  await mkdir(CACHE, { recursive: true });
  // Unpacked beside the cache and renamed into place, so an interrupted fetch is never reused.
  const work = await mkdtemp(join(CACHE, 'fetch-'));
  try {
    const spec = `${CERBOS_PACKAGE}@${CERBOS_VERSION}`;
    const tarball = await npmPack(spec, work);
    await run('tar', ['-xzf', tarball, '-C', work]);
    await rename(join(work, 'package/cerbos-linux-x64'), binary);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return binary;
}

async function isExecutable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/** Downloads the package's tarball into `dir` (npm checks its integrity) and returns its path. */
async function npmPack(spec: string, dir: string): Promise<string> {
  try {
    const { stdout } = await run('npm', ['pack', spec, '--json', '--pack-destination', dir], {
      maxBuffer: 1 << 20,
    });
    const [packed] = JSON.parse(stdout) as { filename: string }[];
    if (!packed) throw new Error(`npm pack printed no file name: ${stdout}`);
    return join(dir, packed.filename);
  } catch (err) {
    throw new Error(`could not fetch ${spec} with npm pack for the Cerbos baseline: ${String(err)}`, {
      cause: err,
    });
  }
}

/**
 * `cerbos server` with bench/fixtures/same-question/cerbos: the database policy from disk,
 * HTTP on a free loopback port, decision log on, written to a file in a temporary folder.
 */
export async function startCerbos(): Promise<ServerProcess & { decisionLogPath: string }> {
  const binary = await installCerbos();
  const [httpPort, grpcPort] = await freePorts(2);
  const auditDir = await tempDir('arbiter-bench-cerbos-audit-');
  const decisionLogPath = join(auditDir, 'decisions.log');
  try {
    const server = await startServer({
      name: 'cerbos',
      command: binary,
      args: ['server', `--config=${join(FIXTURES, 'config.yaml')}`],
      port: httpPort!,
      readyPath: '/_cerbos/health',
      env: {
        CERBOS_HTTP_PORT: String(httpPort),
        CERBOS_GRPC_PORT: String(grpcPort),
        CERBOS_POLICY_DIR: join(FIXTURES, 'policies'),
        CERBOS_DECISION_LOG: decisionLogPath,
      },
    });
    return { ...removingOnStop(server, auditDir), decisionLogPath };
  } catch (err) {
    await rm(auditDir, { recursive: true, force: true });
    throw err;
  }
}

export interface CerbosAnswer {
  /** EFFECT_ALLOW or EFFECT_DENY for the action `query`. */
  effect: string;
  /** The id under which Cerbos logged the decision. */
  callId: string;
}

/** One CheckResources request with a single resource and the action `query`. */
export async function checkQuery(url: string, body: string): Promise<CerbosAnswer> {
  const response = await fetch(url + CHECK_PATH, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body,
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`Cerbos answered ${response.status}: ${text}`);
  const json = JSON.parse(text) as {
    results?: { actions?: Record<string, string> }[];
    cerbosCallId?: string;
  };
  return { effect: json.results?.[0]?.actions?.['query'] ?? '', callId: json.cerbosCallId ?? '' };
}

/**
 * Waits until the decision log holds every call id: the comparison is only fair while
 * Cerbos records its decisions as Arbiter does.
 */
export async function waitForDecisions(decisionLogPath: string, callIds: readonly string[]): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const log = await readFile(decisionLogPath, 'utf8').catch(() => '');
    const missing = callIds.filter((id) => !log.includes(`"callId":"${id}"`));
    if (missing.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`Cerbos's decision log ${decisionLogPath} lacks the calls ${missing.join(', ')}`);
    }
    await sleep(100);
  }
}
