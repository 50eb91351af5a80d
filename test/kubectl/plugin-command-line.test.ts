import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, removeDir, tempDir } from '../support/arbiter-process.js';
import { isOneLine, pluginEnv, runPlugin, type PluginResult } from './support/run-plugin.js';

/** `kubectl arbiter` on command lines it can answer without reaching any server. */
let home: string;

beforeAll(async () => {
  home = await tempDir('arbiter-kubectl-cli-');
});
afterAll(async () => {
  await removeDir(home);
});

const plugin = (...args: string[]) => runPlugin(args, pluginEnv(home));

function expectUsageError(result: PluginResult, message: string) {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stderr).toBe(`error: ${message} (see kubectl arbiter --help)\n`);
  expect(result.stdout).toBe('');
}

describe('kubectl arbiter: the command line', () => {
  it('--version prints the version of the package', async () => {
    const { version } = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { version: string };
    expect(await plugin('--version')).toEqual({
      code: 0,
      stdout: `kubectl-arbiter ${version}\n`,
      stderr: '',
    });
  });

  it('audit alone lists the audit commands (exit 2; with --help, exit 0)', async () => {
    const alone = await plugin('audit');
    expect(alone.code).toBe(2);
    expect(alone.stderr).toBe('');
    expect(alone.stdout).toMatch(/^Usage: kubectl arbiter audit <command> \[flags\]\n/);
    expect(alone.stdout).toContain('\n  audit tail [--event-type TYPE] [-n NAMESPACE | -A] [-o json]');
    expect(alone.stdout).not.toContain('  pending');
    expect(await plugin('audit', '--help')).toEqual({ code: 0, stdout: alone.stdout, stderr: '' });
  });

  it('a wrong command line is one line with a pointer to --help, exit 2', async () => {
    expectUsageError(await plugin('pending', '--bogus'), "unknown option '--bogus'");
    expectUsageError(await plugin('frobnicate'), 'unknown command "frobnicate"');
    expectUsageError(await plugin('audit', 'head'), 'unknown command "audit head"');
    expectUsageError(await plugin('get'), 'get takes one decision ID');
  });

  it('a kubeconfig that is not YAML is one line, exit 1', async () => {
    const broken = join(home, 'broken.kubeconfig');
    await writeFile(broken, 'clusters: [\n');
    const result = await plugin('pending', '--kubeconfig', broken, '--token', 'x');
    expect(result.code).toBe(1);
    expect(isOneLine(result.stderr), result.stderr).toBe(true);
    expect(result.stderr).toMatch(/^error: cannot load the kubeconfig: /);
  });
});
