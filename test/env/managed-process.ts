import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';

/**
 * A server process started by the test harness. It never outlives the test process:
 * `stop()` ends it, an `exit` hook kills whatever is left when Node exits, and a tiny
 * watchdog shell kills it within a second if Node itself is killed (SIGKILL, OOM).
 */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  readonly exited: Promise<number | null>;
  isRunning(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
  /** The last lines of its combined stdout/stderr, for error messages. */
  logTail(lines?: number): Promise<string>;
}

export interface StartProcessOptions {
  name: string;
  command: string;
  args: readonly string[];
  logPath: string;
  env?: NodeJS.ProcessEnv;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/**
 * Ties a child started elsewhere (redis-server) to this process as startProcess does: the
 * exit hook and the watchdog kill it if this process ends first (a killed test worker).
 */
export function neverOutlive(child: ChildProcess): void {
  if (child.pid === undefined) return;
  installExitHook();
  running.add(child);
  child.once('exit', () => running.delete(child));
  startWatchdog(child.pid);
}

/** Kills `childPid` as soon as this Node process is gone; ends itself when the child does. */
function startWatchdog(childPid: number): void {
  const script =
    `while kill -0 ${process.pid} 2>/dev/null && kill -0 ${childPid} 2>/dev/null; do sleep 1; done; ` +
    `kill -KILL ${childPid} 2>/dev/null; exit 0`;
  const watchdog = spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore' });
  watchdog.unref();
}

export function startProcess(options: StartProcessOptions): ManagedProcess {
  installExitHook();
  const log = createWriteStream(options.logPath, { flags: 'a' });
  const child = spawn(options.command, options.args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: options.env ?? process.env,
  });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  if (child.pid === undefined) {
    // spawn failures (ENOENT, EACCES) are reported asynchronously through 'error'.
    log.end();
  } else {
    running.add(child);
    startWatchdog(child.pid);
  }

  const exited = new Promise<number | null>((resolve) => {
    const done = (code: number | null): void => {
      running.delete(child);
      log.end();
      resolve(code);
    };
    child.once('exit', (code) => done(code));
    child.once('error', (err) => {
      log.write(`${options.name}: failed to start ${options.command}: ${err.message}\n`);
      done(null);
    });
  });
  let alive = child.pid !== undefined;
  void exited.then(() => {
    alive = false;
  });

  return {
    name: options.name,
    pid: child.pid ?? -1,
    logPath: options.logPath,
    exited,
    isRunning: () => alive,
    async stop(graceMs = 5_000) {
      if (!alive) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
    async logTail(lines = 30) {
      const text = await readFile(options.logPath, 'utf8').catch(() => '');
      return text.trimEnd().split('\n').slice(-lines).join('\n');
    },
  };
}
