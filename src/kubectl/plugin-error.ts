/** Exit status of a command line the plugin does not understand (as `arbiter` uses it). */
export const USAGE_EXIT_CODE = 2;

/**
 * An expected failure (a refusal by Arbiter or the API server, an unreachable server, a
 * missing token): main prints its message as one line on stderr, never a stack trace.
 */
export class PluginError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PluginError';
  }
}

/** The command line is wrong: main prints the message and the usage. */
export class UsageError extends PluginError {
  constructor(message: string) {
    super(message, USAGE_EXIT_CODE);
    this.name = 'UsageError';
  }
}
