import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { freePort } from './free-ports.js';
import { neverOutlive } from './managed-process.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const REDIS_SERVER_BIN = '/usr/bin/redis-server';

/** A real redis-server (the Debian package) on a free loopback port with its own data dir. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  readonly running: boolean;
  /** SIGTERM and wait for exit. */
  stop(): Promise<void>;
  /** SIGKILL: a crash; only what reached the AOF survives. */
  kill9(): Promise<void>;
  /** SIGSTOP / SIGCONT: a server that stops answering (and replicating) for a while. */
  pause(): void;
  resume(): void;
  /** Starts again on the same port and dir (after stop or kill9). */
  restart(): Promise<void>;
  /** stop() and remove the data dir. */
  dispose(): Promise<void>;
}

export interface RedisServerOptions {
  /** Default always: the durability the tests rely on. */
  appendfsync?: 'always' | 'everysec' | 'no';
  startTimeoutMs?: number;
  /** More redis-server flags, e.g. ['--replicaof', '127.0.0.1', '6379']. */
  extraArgs?: string[];
}

export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'arbiter-redis-'));
  const port = await freePort();
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'yes',
    '--appendfsync',
    options.appendfsync ?? 'always',
    '--dir',
    dir,
    '--daemonize',
    'no',
    ...(options.extraArgs ?? []),
  ];
  const startTimeoutMs = options.startTimeoutMs ?? 10_000;
  let child: ChildProcess | undefined;

  const launch = async (): Promise<void> => {
    const proc = spawn(REDIS_SERVER_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    neverOutlive(proc);
    const output: string[] = [];
    proc.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    proc.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child = proc;
    try {
      await waitForPing(port, startTimeoutMs, () => proc.exitCode !== null);
    } catch (err) {
      proc.kill('SIGKILL');
      throw new Error(`redis-server did not start: ${output.join('').slice(-2000)}`, { cause: err });
    }
  };

  const terminate = async (signal: NodeJS.Signals): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill(signal);
    await exited;
  };

  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    get running() {
      return child !== undefined;
    },
    stop: () => terminate('SIGTERM'),
    kill9: () => terminate('SIGKILL'),
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    restart: async () => {
      await terminate('SIGTERM');
      await launch();
    },
    dispose: async () => {
      await terminate('SIGTERM');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPing(port: number, timeoutMs: number, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited()) throw new Error('redis-server exited');
    if (await ping(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no PONG on port ${port} within ${timeoutMs} ms`);
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      // A server still loading the AOF answers -LOADING: not ready yet.
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}
