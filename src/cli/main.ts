#!/usr/bin/env node
import { reportFailure, UsageError } from './command-line.js';
import { commandsHelp, commandsUnder, findCommand, type Command } from './commands.js';
import { VERSION } from './version.js';

// Each command loads its own modules when it runs: `arbiter validate` in CI need not load
// the server (express, the Kubernetes client, ioredis) to check a few files.

const COMMANDS: readonly Command[] = [
  {
    words: ['serve'],
    usage: 'serve',
    summary: 'serve the API (see: arbiter serve --help)',
    run: async (argv) => {
      const { parseServeOptions, SERVE_HELP } = await import('./serve-options.js');
      const options = parseServeOptions(argv, process.env);
      if (options === 'help') {
        process.stdout.write(SERVE_HELP);
        return 0;
      }
      await (await import('./serve.js')).serve(options);
      return 0;
    },
  },
  {
    words: ['validate'],
    usage: 'validate PATH...',
    summary: 'check manifests as the server and the admission webhook do',
    run: async (argv) => (await import('./validate.js')).runValidate(argv),
  },
  {
    words: ['test'],
    usage: 'test PATH...',
    summary: "run policy test suites (*.test.yaml) with the server's engine",
    run: async (argv) => (await import('./policy-test.js')).runPolicyTests(argv),
  },
  {
    words: ['replay'],
    usage: 'replay EXPORT --manifests DIR',
    summary: 'which recorded outcomes a configuration would change',
    run: async (argv) => (await import('./replay.js')).runReplay(argv),
  },
  {
    words: ['mcp', 'import'],
    usage: 'mcp import URL --server NAME [--out FILE | --diff PATH]',
    summary: "write Capability manifests for an MCP server's tools",
    run: async (argv) => (await import('./mcp-import.js')).runMcpImport(argv),
  },
  {
    words: ['receipt', 'verify'],
    usage: 'receipt verify --vkey VKEY [FILE]',
    summary: 'check the signed receipt of a call the MCP tool proxy forwarded',
    run: async (argv) => (await import('./receipt-verify.js')).runReceiptVerify(argv),
  },
  {
    words: ['witness'],
    usage: 'witness --log-vkey VKEY --key FILE --state FILE [--port N]',
    summary: "a C2SP tlog-witness: cosigns a log's checkpoints that extend the last it saw",
    run: async (argv) => (await import('./witness.js')).runWitness(argv),
  },
  {
    words: ['audit', 'keygen'],
    usage: 'audit keygen --origin ORIGIN --out FILE [--witness]',
    summary: 'create a key for signing audit checkpoints; prints its verifier key',
    run: async (argv) => (await import('./audit-keygen.js')).runAuditKeygen(argv),
  },
  {
    words: ['audit', 'verify-proof'],
    usage: 'audit verify-proof --vkey VKEY --entry ENTRY.json --proof PROOF',
    summary: 'prove offline that one audit entry is in the signed log',
    run: async (argv) => (await import('./audit-verify-proof.js')).runAuditVerifyProof(argv),
  },
  {
    words: ['audit', 'verify-consistency'],
    usage: 'audit verify-consistency --vkey VKEY --proof PROOF OLD NEW',
    summary: 'prove offline that a signed checkpoint extends an older one',
    run: async (argv) => (await import('./audit-verify-consistency.js')).runAuditVerifyConsistency(argv),
  },
  {
    words: ['audit', 'archive'],
    usage: 'audit archive --before TIME --out FILE',
    summary: 'archive the oldest audit entries to a file, then remove them from the log',
    run: async (argv) => (await import('./audit-archive.js')).runAuditArchive(argv, process.env),
  },
  {
    words: ['audit', 'verify'],
    usage: 'audit verify FILE...',
    summary: 'verify an audit export offline',
    run: async (argv) => (await import('./audit-verify.js')).runAuditVerify(argv),
  },
];

const HELP_FLAGS = new Set(['--help', '-h']);

/** What the command line names, and the name its errors are reported under. */
function dispatch(argv: readonly string[]): { name: string; run(): number | Promise<number> } {
  const found = findCommand(COMMANDS, argv);
  if (found)
    return { name: `arbiter ${found.command.words.join(' ')}`, run: () => found.command.run(found.rest) };
  const end = argv.findIndex((arg) => arg.startsWith('-'));
  const words = end === -1 ? argv : argv.slice(0, end);
  const flags = argv.slice(words.length);
  if (words.length === 0 || (words.length === 1 && words[0] === 'help'))
    return { name: 'arbiter', run: () => listCommands(COMMANDS, [], words.length ? ['--help'] : flags) };
  const group = commandsUnder(COMMANDS, words);
  if (group.length > 0)
    return { name: `arbiter ${words.join(' ')}`, run: () => listCommands(group, words, flags) };
  return {
    name: 'arbiter',
    run: () => {
      throw new UsageError(`unknown command "${words.join(' ')}"`);
    },
  };
}

/**
 * `arbiter` or a group (`arbiter audit`) without a command: its commands on stdout, exit 2
 * (exit 0 when asked with --help); `arbiter --version`.
 */
function listCommands(commands: readonly Command[], group: readonly string[], flags: string[]): number {
  const [flag, ...more] = flags;
  if (more.length > 0) throw new UsageError(`unexpected argument '${more[0]}'`);
  if (flag === '--version' && group.length === 0) {
    process.stdout.write(`arbiter ${VERSION}\n`);
    return 0;
  }
  if (flag !== undefined && !HELP_FLAGS.has(flag)) throw new UsageError(`unknown option '${flag}'`);
  process.stdout.write(commandsHelp(commands, group));
  return flag === undefined ? 2 : 0;
}

const command = dispatch(process.argv.slice(2));
// then(): a command that throws at once is reported like one that rejects.
Promise.resolve()
  .then(() => command.run())
  .then(
    (code) => {
      if (code !== 0) process.exitCode = code;
    },
    (err: unknown) => {
      // Exit now: a server that failed half-way through its start may hold open handles.
      process.exit(reportFailure(command.name, err));
    },
  );
