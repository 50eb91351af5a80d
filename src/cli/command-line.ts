import { parseArgs, type ParseArgsConfig } from 'node:util';
import { commandLineComplaint, errorText } from '../model/error-text.js';

/**
 * A wrong command line (an unknown option, a missing or malformed value): main prints the
 * message as one line with a pointer to the command's --help, and exits 2.
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * node:util's parseArgs (strict), its complaints as UsageErrors in their first sentence
 * ("unknown option '--x'"). `operands: 'none'` refuses positional arguments.
 */
export function parseCommandLine<const O extends Options>(
  args: string[],
  options: O,
  operands: 'any' | 'none' = 'any',
) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(commandLineComplaint(err));
  }
  if (operands === 'none' && parsed.positionals.length > 0)
    throw new UsageError(`unexpected argument '${parsed.positionals[0]}'`);
  return parsed;
}

/** Refuses the command line unless every flag named is given: `--a and --b are required`. */
export function requireFlags<V extends object, K extends keyof V & string>(
  values: V,
  flags: readonly K[],
): asserts values is V & { [F in K]-?: NonNullable<V[F]> } {
  const missing = flags.filter((flag) => values[flag] === undefined).map((flag) => `--${flag}`);
  if (missing.length === 0) return;
  const list = missing.length === 1 ? missing[0] : `${missing.slice(0, -1).join(', ')} and ${missing.at(-1)}`;
  throw new UsageError(`${list} ${missing.length === 1 ? 'is' : 'are'} required`);
}

/**
 * A command's frame: its options parsed (`help` prints the help, exit 0), then run. A
 * UsageError on the way reaches main, which reports it.
 */
export async function runCommand<T>(
  help: string,
  parse: () => T | 'help' | Promise<T | 'help'>,
  run: (options: T) => Promise<number>,
): Promise<number> {
  const options = await parse();
  if (options === 'help') {
    process.stdout.write(help);
    return 0;
  }
  return run(options);
}

/**
 * The one place a command's failure is printed, as one line on stderr (`arbiter audit
 * verify: ...`); returns the exit status: 2 for a UsageError, 1 for anything else.
 */
export function reportFailure(command: string, err: unknown): number {
  if (err instanceof UsageError) {
    process.stderr.write(`${command}: ${err.message} (see ${command} --help)\n`);
    return 2;
  }
  process.stderr.write(`${command}: ${errorText(err)}\n`);
  return 1;
}
