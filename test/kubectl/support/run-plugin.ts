import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO } from '../../support/arbiter-process.js';

/** The built plugin, as `kubectl arbiter` runs it once it is on PATH as kubectl-arbiter. */
export const PLUGIN = join(REPO, 'dist/kubectl/main.js');

export interface PluginResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Only what a test gives: no KUBECONFIG or ARBITER_TOKEN of the machine running the
 * tests, and a HOME of its own (so no ~/.kube/config either).
 */
export function pluginEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HOME: home, ...extra };
}

function spawnPlugin(args: readonly string[], env: NodeJS.ProcessEnv): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [PLUGIN, ...args], { cwd: REPO, env });
}

/** Runs the plugin to its end. */
export function runPlugin(args: readonly string[], env: NodeJS.ProcessEnv): Promise<PluginResult> {
  return new Promise((resolve) => {
    const child = spawnPlugin(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A plugin command that runs until stopped (`audit tail`), with what it printed so far. */
export interface RunningPlugin {
  readonly output: PluginResult;
  /** Waits (bounded) until its output satisfies `check`; fails with the output otherwise. */
  waitFor(what: string, check: (output: PluginResult) => boolean): Promise<void>;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function startPlugin(args: readonly string[], env: NodeJS.ProcessEnv): RunningPlugin {
  const child = spawnPlugin(args, env);
  const output: PluginResult = { code: null, stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (c: string) => (output.stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (output.stderr += c));
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      output.code = code;
      resolve(code);
    }),
  );
  return {
    output,
    async waitFor(what, check) {
      const deadline = Date.now() + 15_000;
      while (!check(output)) {
        if (output.code !== null || Date.now() > deadline) {
          throw new Error(
            `plugin ${args.join(' ')}: ${output.code === null ? 'gave up waiting for' : `exited ${output.code} before`} ${what}\n` +
              `stdout:\n${output.stdout}\nstderr:\n${output.stderr}`,
          );
        }
        await sleep(50);
      }
    },
    async stop(signal = 'SIGTERM') {
      if (output.code === null) child.kill(signal);
      return exited;
    },
  };
}

export { isOneLine } from '../../support/one-line.js';
