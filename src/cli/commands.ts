/** One `arbiter` command: its words, a one-line summary for `arbiter --help`, and what runs it. */
export interface Command {
  /** The words that name it, e.g. ['audit', 'verify']. */
  words: readonly string[];
  usage: string;
  summary: string;
  /** Runs with the arguments after the command's words; resolves with the exit status. */
  run(argv: string[]): Promise<number>;
}

/** The command whose words start argv, longest first; undefined when none does. */
export function findCommand(
  commands: readonly Command[],
  argv: readonly string[],
): { command: Command; rest: string[] } | undefined {
  const sorted = [...commands].sort((a, b) => b.words.length - a.words.length);
  for (const command of sorted)
    if (command.words.every((word, i) => argv[i] === word))
      return { command, rest: argv.slice(command.words.length) };
  return undefined;
}

/**
 * The commands of a group that the words name (`audit`: audit keygen, audit verify...);
 * empty when the words name no group.
 */
export function commandsUnder(commands: readonly Command[], words: readonly string[]): Command[] {
  if (words.length === 0) return [];
  return commands.filter(
    (c) => c.words.length > words.length && words.every((word, i) => c.words[i] === word),
  );
}

/** `arbiter --help` (or `arbiter audit --help` for a group), made from the list that dispatches. */
export function commandsHelp(commands: readonly Command[], group: readonly string[] = []): string {
  const width = Math.max(...commands.map((c) => c.usage.length)) + 2;
  const lines = commands.map((c) => `  ${c.usage.padEnd(width)}${c.summary}`);
  const name = ['arbiter', ...group].join(' ');
  const version = group.length === 0 ? '\narbiter --version prints the version.' : '';
  return `Usage: ${name} <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nEach command has --help.${version}\n`;
}
