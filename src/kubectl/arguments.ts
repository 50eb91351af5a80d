import { parseArgs } from 'node:util';
import { commandLineComplaint } from '../model/error-text.js';
import { isNamespaceName } from '../model/namespaced-actor-id.js';
import { UsageError } from './plugin-error.js';

export type OutputFormat = 'text' | 'json';

/** How to reach Arbiter and what to present to it: the flags every command shares. */
export interface ConnectionFlags {
  /** --server: Arbiter's own URL; without it the plugin finds the Service in the cluster. */
  server?: URL;
  token?: string;
  /** --arbiter-namespace: where Arbiter's Service is; -n names the records' namespace. */
  arbiterNamespace?: string;
  service?: string;
  kubeconfig?: string;
  context?: string;
}

/** A flag only some commands take. */
export type CommandFlag = 'comment' | 'event-type' | 'namespace' | 'all-namespaces';

/**
 * Which records a listing command shows, as kubectl has it: one namespace's (-n), or all
 * with a NAMESPACE column (-A). With neither, all: cluster actors' records and every
 * namespace's, as a cluster-wide reviewer or auditor sees them.
 */
export interface RecordScope {
  namespace?: string;
  /** -A: show each record's namespace. */
  all: boolean;
}

/** What the parser needs to know of a command (commands.ts adds how it runs). */
export interface CommandShape {
  /** The words that name it, e.g. ['audit', 'tail']. */
  words: readonly string[];
  /** It names one decision: `get ID`. */
  takesDecisionId: boolean;
  ownFlags: readonly CommandFlag[];
}

export interface Invocation<C extends CommandShape> {
  command: C;
  /** Set when command.takesDecisionId. */
  decisionId: string;
  comment?: string;
  eventType?: string;
  output: OutputFormat;
  records: RecordScope;
  connection: ConnectionFlags;
}

const OPTIONS = {
  server: { type: 'string' },
  token: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  'all-namespaces': { type: 'boolean', short: 'A' },
  'arbiter-namespace': { type: 'string' },
  service: { type: 'string' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  output: { type: 'string', short: 'o' },
  comment: { type: 'string' },
  'event-type': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

type FlagValues = ReturnType<typeof parseFlags>['values'];

/**
 * A command line that runs no command: the help of the plugin (`group` empty) or of a group
 * of commands (`audit`), exit 0 when asked for with --help (or help), else 2.
 */
export interface HelpRequest {
  help: { group: readonly string[]; asked: boolean };
}

/**
 * The command line as an invocation of one of `commands`, a request for help, or for the
 * version; UsageError when it is wrong.
 */
export function parseInvocation<C extends CommandShape>(
  argv: readonly string[],
  commands: readonly C[],
): Invocation<C> | HelpRequest | 'version' {
  const { values, positionals } = parseFlags(argv);
  const instead = runsNoCommand(values, positionals, commands);
  if (instead) return instead;
  const command = commandNamedBy(positionals, commands);
  const operands = positionals.slice(command.words.length);
  const wanted = command.takesDecisionId ? 1 : 0;
  if (operands.length !== wanted) {
    throw new UsageError(
      command.takesDecisionId
        ? `${command.words.join(' ')} takes one decision ID`
        : `${command.words.join(' ')} takes no arguments, got "${operands.join(' ')}"`,
    );
  }
  rejectForeignFlags(command, values);
  return {
    command,
    decisionId: operands[0] ?? '',
    ...(values.comment === undefined ? {} : { comment: values.comment }),
    ...(values['event-type'] === undefined ? {} : { eventType: values['event-type'] }),
    output: outputFormat(values.output),
    records: recordScope(values),
    connection: connectionFlags(values),
  };
}

function parseFlags(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    // parseArgs explains itself ("unknown option '--x'", "option '--server <value>' argument missing").
    throw new UsageError(commandLineComplaint(err));
  }
}

/** The command whose words start the positionals, the longest such. */
function commandNamedBy<C extends CommandShape>(positionals: readonly string[], commands: readonly C[]): C {
  const bySpecificity = [...commands].sort((a, b) => b.words.length - a.words.length);
  const found = bySpecificity.find((c) => c.words.every((word, i) => positionals[i] === word));
  if (!found) throw new UsageError(`unknown command "${positionals.join(' ')}"`);
  return found;
}

/** --version, or help: with --help, no words, `help`, or a group's name alone. */
function runsNoCommand(
  values: FlagValues,
  positionals: readonly string[],
  commands: readonly CommandShape[],
): HelpRequest | 'version' | undefined {
  if (values.version) return 'version';
  const asked = values.help === true;
  if (positionals.length === 0 || positionals[0] === 'help')
    return { help: { group: [], asked: asked || positionals.length > 0 } };
  if (namesGroup(positionals, commands)) return { help: { group: positionals, asked } };
  return asked ? { help: { group: [], asked } } : undefined;
}

/** The words start the names of longer commands: `audit` for `audit tail`. */
function namesGroup(words: readonly string[], commands: readonly CommandShape[]): boolean {
  return commands.some((c) => c.words.length > words.length && words.every((word, i) => c.words[i] === word));
}

function rejectForeignFlags(command: CommandShape, values: FlagValues): void {
  for (const flag of ['comment', 'event-type', 'namespace', 'all-namespaces'] as const) {
    if (values[flag] !== undefined && !command.ownFlags.includes(flag)) {
      throw new UsageError(`--${flag} does not apply to ${command.words.join(' ')}`);
    }
  }
}

function recordScope(values: FlagValues): RecordScope {
  const all = values['all-namespaces'] === true;
  const namespace = values.namespace;
  if (namespace === undefined) return { all };
  if (all) throw new UsageError('--namespace and --all-namespaces exclude each other');
  if (!isNamespaceName(namespace))
    throw new UsageError(`--namespace must be a namespace name, got "${namespace}"`);
  return { namespace, all };
}

function outputFormat(raw: string | undefined): OutputFormat {
  if (raw === undefined) return 'text';
  if (raw === 'json') return 'json';
  throw new UsageError(`--output must be json (or left out for text), got "${raw}"`);
}

function connectionFlags(values: FlagValues): ConnectionFlags {
  return {
    ...(values.server === undefined ? {} : { server: serverUrl(values.server) }),
    ...(values.token === undefined ? {} : { token: nonEmpty('--token', values.token) }),
    ...(values['arbiter-namespace'] === undefined
      ? {}
      : { arbiterNamespace: nonEmpty('--arbiter-namespace', values['arbiter-namespace']) }),
    ...(values.service === undefined ? {} : { service: nonEmpty('--service', values.service) }),
    ...(values.kubeconfig === undefined ? {} : { kubeconfig: nonEmpty('--kubeconfig', values.kubeconfig) }),
    ...(values.context === undefined ? {} : { context: nonEmpty('--context', values.context) }),
  };
}

function serverUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--server must be a URL such as http://localhost:8080, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--server must be an http:// or https:// URL, got "${raw}"`);
  }
  return url;
}

function nonEmpty(flag: string, value: string): string {
  if (value.trim() === '') throw new UsageError(`${flag} must not be empty`);
  return value;
}
