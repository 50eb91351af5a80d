import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A wrong command line: the command prints it with its help, and exits 2. */
export class UsageError extends Error {}

/** A UsageError as one line, `arbiter NAME: message`, for commands that print no help with it: exit 2. */
export function usageFailure(name: string, err: UsageError): 2 {
  process.stderr.write(`arbiter ${name}: ${err.message}\n`);
  return 2;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** node:util's parseArgs, positionals allowed, with its complaints as UsageErrors. */
export function parseCommandLine<const O extends Options>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/**
 * A command's frame: its options parsed (`help` prints the help, exit 0), then run; a
 * UsageError on the way is `arbiter NAME: message` and the help on stderr, exit 2.
 */
export async function runCommand<T>(
  name: string,
  help: string,
  parse: () => T | 'help' | Promise<T | 'help'>,
  run: (options: T) => Promise<number>,
): Promise<number> {
  try {
    const options = await parse();
    if (options === 'help') {
      process.stdout.write(help);
      return 0;
    }
    return await run(options);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`arbiter ${name}: ${err.message}\n\n${help}`);
    return 2;
  }
}
