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

/** `arbiter --help`, made from the same list that dispatches. */
export function commandsHelp(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.usage.length)) + 2;
  const lines = commands.map((c) => `  ${c.usage.padEnd(width)}${c.summary}`);
  return `Usage: arbiter <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nEach command has --help.\n`;
}
