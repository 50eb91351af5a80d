import { getSystemErrorMap } from 'node:util';

/** How a system call's failure reads after the address it was about. */
const ADDRESS_VERBS: Record<string, string> = { listen: 'cannot listen on', connect: 'cannot connect to' };

/**
 * Any thrown value as one line a person can act on, for a command line's last word: the
 * message's first line, and a system error (ENOENT, EADDRINUSE...) as what it was about and
 * what went wrong, e.g. `/tmp/x.jsonl: no such file or directory` or
 * `cannot listen on 0.0.0.0:8080: address already in use`.
 */
export function errorText(err: unknown): string {
  if (!(err instanceof Error)) return firstLine(String(err));
  return firstLine(systemErrorText(err) ?? (err.message || err.name));
}

interface SystemError extends Error {
  errno?: unknown;
  syscall?: unknown;
  path?: unknown;
  dest?: unknown;
  address?: unknown;
  port?: unknown;
}

function systemErrorText(err: SystemError): string | undefined {
  if (typeof err.errno !== 'number' || typeof err.syscall !== 'string') return undefined;
  const description = getSystemErrorMap().get(err.errno)?.[1];
  if (description === undefined) return undefined;
  if (typeof err.path === 'string') {
    const dest = typeof err.dest === 'string' ? ` -> ${err.dest}` : '';
    return `${err.path}${dest}: ${description}`;
  }
  if (typeof err.address === 'string') {
    const where = typeof err.port === 'number' ? `${err.address}:${err.port}` : err.address;
    return `${ADDRESS_VERBS[err.syscall] ?? err.syscall} ${where}: ${description}`;
  }
  return `${err.syscall}: ${description}`;
}

function firstLine(text: string): string {
  const end = text.indexOf('\n');
  return (end === -1 ? text : text.slice(0, end)).trimEnd();
}

/**
 * node:util parseArgs's complaint about a command line in its first sentence, e.g.
 * `unknown option '--x'` (without its advice on positionals that start with '-').
 */
export function commandLineComplaint(err: unknown): string {
  const sentence = errorText(err).split('. ')[0]!;
  return sentence.charAt(0).toLowerCase() + sentence.slice(1);
}
