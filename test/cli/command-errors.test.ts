import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_KEYS, EXAMPLE_MANIFESTS, REPO } from '../support/arbiter-process.js';
import { isOneLine } from '../support/one-line.js';
import { runArbiter, useFixtureDir, type CliResult } from './support/cli-run.js';

const fixtures = useFixtureDir('arbiter-cli-errors-');

/** The commands `arbiter --help` lists, as their words (['audit', 'verify']). */
async function listedCommands(): Promise<string[][]> {
  const help = await runArbiter(['--help']);
  expect(help.code).toBe(0);
  const table = help.stdout.split('Commands:\n')[1]!.split('\n\n')[0]!;
  return table.split('\n').map((line) => {
    const usage = line.trim().split(/\s{2,}/)[0]!;
    return usage.split(' ').filter((word) => /^[a-z][a-z-]*$/.test(word));
  });
}

/** A usage error: one line naming the command and its --help, exit 2. */
function expectUsageError(result: CliResult, command: string, message: RegExp | string) {
  expect(result.code, result.stderr).toBe(2);
  expect(isOneLine(result.stderr), result.stderr).toBe(true);
  expect(result.stderr).toContain(`arbiter ${command}: `);
  expect(result.stderr).toMatch(message);
  expect(result.stderr.trimEnd()).toMatch(new RegExp(`\\(see arbiter ${command} --help\\)$`));
  expect(result.stdout).toBe('');
}

/** A failure: one line naming the command, exit 1, no stack trace. */
function expectFailure(result: CliResult, command: string, message: RegExp | string) {
  expect(result.code, result.stderr).toBe(1);
  expect(isOneLine(result.stderr), result.stderr).toBe(true);
  expect(result.stderr).toMatch(new RegExp(`^arbiter ${command}: `));
  expect(result.stderr).toMatch(message);
}

describe('arbiter: errors a person can read', () => {
  // Each case starts a node process: minutes on a loaded 2-core machine.
  it('every command refuses an unknown option in one line with exit 2', { timeout: 180_000 }, async () => {
    const commands = await listedCommands();
    expect(commands).toContainEqual(['serve']);
    expect(commands).toContainEqual(['audit', 'verify']);
    for (const words of commands) {
      const result = await runArbiter([...words, '--bogus']);
      expectUsageError(result, words.join(' '), "unknown option '--bogus'");
    }
  });

  it(
    'a command without what it needs says what is missing, in one line, exit 2',
    { timeout: 180_000 },
    async () => {
      const cases: Array<[string, string[], RegExp | string]> = [
        ['audit keygen', [], /--origin and --out are required/],
        ['audit keygen', ['--origin', 'example.com/log'], /--out is required/],
        ['audit verify', [], /name at least one audit export/],
        ['audit verify-proof', ['--vkey', 'k'], /--entry and --proof are required/],
        ['audit verify-consistency', ['--vkey', 'k', '--proof', 'p'], /name the checkpoints OLD and NEW/],
        ['audit archive', ['--out', 'x.jsonl'], /--before TIME \(ISO 8601\) is required/],
        ['witness', ['--key', 'k'], /--log-vkey and --state are required/],
        ['serve', [], /--api-keys FILE is required/],
        ['serve', ['--api-keys', 'k', '--port', 'abc'], /--port: abc is not a valid value/],
        ['serve', ['--api-keys', 'k', 'extra'], /unexpected argument 'extra'/],
        ['validate', [], /name at least one file or folder of manifests/],
        ['test', [], /name at least one test suite file or folder/],
        ['replay', [], /name one audit export/],
        ['mcp import', [], /name the MCP server URL/],
      ];
      for (const [command, args, message] of cases) {
        expectUsageError(await runArbiter([...command.split(' '), ...args]), command, message);
      }
    },
  );

  it('an unknown command is one line with exit 2', async () => {
    const result = await runArbiter(['frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('arbiter: unknown command "frobnicate" (see arbiter --help)\n');
  });

  it('--version prints the version of the package', async () => {
    const { version } = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { version: string };
    const result = await runArbiter(['--version']);
    expect(result).toMatchObject({ code: 0, stdout: `arbiter ${version}\n`, stderr: '' });
  });

  it('arbiter audit alone lists the audit commands; with --help too, exit 0', async () => {
    const audit = (await listedCommands()).filter((words) => words[0] === 'audit');
    expect(audit.length).toBeGreaterThanOrEqual(5);
    const alone = await runArbiter(['audit']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toBe('');
    expect(alone.stdout).toMatch(/^Usage: arbiter audit <command> \[options\]\n/);
    for (const words of audit) expect(alone.stdout).toContain(`\n  ${words.join(' ')} `);
    expect(alone.stdout).not.toContain('  serve ');
    const help = await runArbiter(['audit', '--help']);
    expect(help).toMatchObject({ code: 0, stdout: alone.stdout, stderr: '' });
  });

  describe('failures at run time are one line with exit 1, no stack trace', { timeout: 120_000 }, () => {
    let holder: Server;
    let heldPort: number;
    beforeAll(async () => {
      holder = createServer();
      await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
      heldPort = (holder.address() as { port: number }).port;
    });
    afterAll(() => new Promise((resolve) => holder.close(resolve)));

    const serve = (...flags: string[]) =>
      runArbiter([
        'serve',
        '--api-keys',
        EXAMPLE_KEYS,
        '--data-dir',
        fixtures.path('data'),
        '--host',
        '127.0.0.1',
        ...flags,
      ]);

    it('a port in use', async () => {
      const result = await serve('--manifests', EXAMPLE_MANIFESTS, '--port', String(heldPort));
      expectFailure(result, 'serve', `cannot listen on 127.0.0.1:${heldPort}: address already in use`);
    });

    it('a --manifests folder that does not exist', async () => {
      const missing = fixtures.path('no-such-manifests');
      const result = await serve('--manifests', missing, '--port', '0');
      expectFailure(result, 'serve', `${missing}: no such file or directory`);
    });

    it('an API keys file that does not exist', async () => {
      const result = await runArbiter(['serve', '--api-keys', fixtures.path('no-keys.yaml'), '--port', '0']);
      expectFailure(result, 'serve', 'cannot read API keys file');
    });

    it('an API keys file that is not YAML, a signing key file that does not exist', async () => {
      const notYaml = await fixtures.write('keys.yaml', 'keys:\n  - name: a\n key: [\n');
      const yaml = await runArbiter(['serve', '--api-keys', notYaml, '--port', '0']);
      expectFailure(yaml, 'serve', `API keys file ${notYaml}: `);
      const missingKey = fixtures.path('no-signing.key');
      const signing = await serve('--manifests', EXAMPLE_MANIFESTS, '--audit-signing-key', missingKey);
      expectFailure(
        signing,
        'serve',
        `--audit-signing-key: cannot read ${missingKey}: no such file or directory`,
      );
    });

    it('a checkpoint file that is not JSON', async () => {
      const notJson = await fixtures.write('checkpoints.json', '# not\n JSON\n');
      const result = await runArbiter(['audit', 'verify', '--checkpoint', notJson, notJson]);
      expectFailure(result, 'audit verify', `${notJson} is not JSON`);
    });

    it('an audit export that does not exist', async () => {
      const result = await runArbiter(['audit', 'verify', '/nonexistent.jsonl']);
      expectFailure(result, 'audit verify', '/nonexistent.jsonl: no such file or directory');
    });
  });
});
