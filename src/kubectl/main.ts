#!/usr/bin/env node
import type { KubeConfig } from '@kubernetes/client-node';
import { ArbiterClient } from './arbiter-client.js';
import { parseInvocation } from './arguments.js';
import { COMMANDS, pluginHelp } from './commands.js';
import { arbiterEndpoint } from './connection.js';
import { arbiterToken } from './credentials.js';
import { loadKubeConfig } from './kube-config.js';
import { PluginError, UsageError } from './plugin-error.js';

// `kubectl arbiter ...` runs this as kubectl-arbiter (kubectl finds plugins on PATH by name).
// The composition root of the plugin: the only place that reads the environment.

async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const invocation = parseInvocation(argv, COMMANDS);
  if (invocation === 'help') {
    process.stdout.write(pluginHelp());
    return argv.length === 0 ? 2 : 0;
  }
  const kubeConfig = once(() => loadKubeConfig(invocation.connection, env));
  const token = await arbiterToken({
    ...(invocation.connection.token ? { flag: invocation.connection.token } : {}),
    ...(env.ARBITER_TOKEN ? { environment: env.ARBITER_TOKEN } : {}),
    kubeConfig,
  });
  const endpoint = await arbiterEndpoint(invocation.connection, kubeConfig);
  try {
    return await invocation.command.run({
      client: new ArbiterClient(endpoint, token),
      invocation,
      print: (text) => process.stdout.write(text),
      note: (text) => process.stderr.write(text),
      now: () => new Date(),
      untilInterrupted,
    });
  } finally {
    await endpoint.close();
  }
}

function once(load: () => Promise<KubeConfig>): () => Promise<KubeConfig> {
  let loaded: Promise<KubeConfig> | undefined;
  return () => (loaded ??= load());
}

/** Ctrl-C ends a command that runs until stopped; a second one kills the process as usual. */
function untilInterrupted(): AbortSignal {
  const controller = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => controller.abort());
  return controller.signal;
}

main(process.argv.slice(2), process.env).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof PluginError) {
      const usage = err instanceof UsageError ? '\nRun "kubectl arbiter --help" for usage.' : '';
      process.stderr.write(`error: ${err.message}${usage}\n`);
      process.exitCode = err.exitCode;
      return;
    }
    // Not an expected failure: a bug, worth its stack trace.
    process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
