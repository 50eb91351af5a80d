import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { resolveBinaries } from './binaries.js';
import type { ControlPlane } from './kube-apiserver.js';

export interface KubectlOptions {
  /** Impersonate this user (`--as`), e.g. `system:serviceaccount:agents:bot`: its RBAC applies. */
  as?: string;
  /** Written to kubectl's stdin (for `-f -`). */
  stdin?: string;
  /** Default 30 s; past it kubectl is killed and runKubectl rejects. */
  timeoutMs?: number;
}

export interface KubectlResult {
  /** kubectl's exit code: 0 on success, 1 for most refusals (forbidden, denied by a webhook). */
  code: number;
  stdout: string;
  /** Errors, and the API server's warnings (`Warning: ...`, kubectl >= 1.19). */
  stderr: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Runs the real kubectl (test/env/setup fetches 1.20; see docs/testing.md) against the
 * control plane as admin, or as `options.as` by impersonation. A non-zero exit is a
 * result, not an error: tests assert on code, stdout and stderr. It rejects only when
 * kubectl cannot be started or outlives `timeoutMs`.
 *
 * The discovery cache lives in the control plane's temp directory: kubectl's default
 * (~/.kube/cache, keyed by host and port) would outlive the cluster and could serve a
 * later control plane on the same port the resources of an earlier one.
 */
export function runKubectl(
  controlPlane: Pick<ControlPlane, 'kubeconfigPath' | 'dir'>,
  args: readonly string[],
  options: KubectlOptions = {},
): Promise<KubectlResult> {
  const { kubectl } = resolveBinaries();
  const fullArgs = [
    `--kubeconfig=${controlPlane.kubeconfigPath}`,
    `--cache-dir=${join(controlPlane.dir, 'kubectl-cache')}`,
    ...(options.as === undefined ? [] : [`--as=${options.as}`]),
    ...args,
  ];
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const child = spawn(kubectl, fullArgs, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const command = `kubectl ${args.join(' ')}`;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} did not finish within ${timeoutMs} ms; stderr so far:\n${stderr}`));
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${kubectl}: ${err.message}`, { cause: err }));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      // A kill by signal (the timeout above, or from outside) has no exit code.
      if (code === null) reject(new Error(`${command} was killed by ${signal}; stderr:\n${stderr}`));
      else resolve({ code, stdout, stderr });
    });
    // kubectl may exit before reading its input (a bad flag): that EPIPE is not our error.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin ?? '');
  });
}
