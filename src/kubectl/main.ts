#!/usr/bin/env node
import type { KubeConfig } from '@kubernetes/client-node';
import { ArbiterClient } from './arbiter-client.js';
import { parseInvocation } from './arguments.js';
import { COMMANDS, groupHelp, pluginHelp } from './commands.js';
import { arbiterEndpoint } from './connection.js';
import { arbiterToken } from './credentials.js';
import { loadKubeConfig } from './kube-config.js';
import { PluginError, UsageError } from './plugin-error.js';
import { errorText } from '../model/error-text.js';
import { VERSION } from '../cli/version.js';

// `kubectl arbiter ...` runs this as kubectl-arbiter (kubectl finds plugins on PATH by name).
// The composition root of the plugin: the only place that reads the environment.

async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const invocation = parseInvocation(argv, COMMANDS);
  if (invocation === 'version') {
    process.stdout.write(`kubectl-arbiter ${VERSION}\n`);
    return 0;
  }
  if ('help' in invocation) {
    const { group, asked } = invocation.help;
    process.stdout.write(group.length === 0 ? pluginHelp() : groupHelp(group));
    return asked ? 0 : 2;
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
    // One line, whatever failed; a wrong command line points at --help.
    const usage = err instanceof UsageError ? ' (see kubectl arbiter --help)' : '';
    process.stderr.write(`error: ${errorText(err)}${usage}\n`);
    process.exitCode = err instanceof PluginError ? err.exitCode : 1;
  },
);
