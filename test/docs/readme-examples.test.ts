import { execFile, spawnSync } from 'node:child_process';
import { access, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../operator/support/operator-env.js';
import {
  call,
  CLI,
  KEYS,
  REPO,
  removeDir,
  startArbiter,
  tempDir,
  type ArbiterProcess,
} from '../support/arbiter-process.js';

let arbiter: ArbiterProcess;
let workDir: string;

/** The sh blocks of one README section, each as a user would paste it. */
async function shellBlockList(section: string): Promise<string[]> {
  const readme = await readFile(join(REPO, 'README.md'), 'utf8');
  const start = readme.indexOf(`## ${section}`);
  const end = readme.indexOf('\n## ', start + 1);
  const text = readme.slice(start, end === -1 ? undefined : end);
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

async function shellBlocks(section: string): Promise<string> {
  return (await shellBlockList(section)).join('\n');
}

/** Runs a README script against a server: only the port and the arbiter binary path differ. */
function runScript(script: string, port: number, cwd: string): Promise<{ stdout: string; stderr: string }> {
  const adapted = script
    .replaceAll('localhost:8080', `127.0.0.1:${port}`)
    .replaceAll('npx arbiter', `node ${CLI}`);
  return new Promise((resolve, reject) => {
    execFile('bash', ['-euo', 'pipefail', '-c', adapted], { cwd }, (error, out, err) => {
      if (error) reject(new Error(`${error.message}\n${out}\n${err}`));
      else resolve({ stdout: out, stderr: err });
    });
  });
}

beforeAll(async () => {
  workDir = await tempDir('arbiter-readme-');
  const dataDir = join(workDir, '.arbiter-data');
  await mkdir(dataDir);
  // A checkpoint every second instead of every minute: the archive example's cut needs one.
  arbiter = await startArbiter({ dataDir, args: ['--checkpoint-seconds', '1'] });
});
afterAll(async () => {
  await arbiter.stop();
  await removeDir(workDir);
  await removeDir(arbiter.manifestsDir);
});

describe('README', () => {
  // First, on the server as it started: the README's archive example on a fresh `npm start`.
  it('archives entries with the archive example on a freshly started server', async () => {
    const [apiExample] = await shellBlockList('Keeping the log for years: archives');
    expect(apiExample).toContain('/api/v1/audit/archive');
    // The example's `date` has whole seconds: the checkpoint must be older than the current second.
    await eventually('a checkpoint older than a second', async () => {
      const res = await call(arbiter.url, 'GET', '/api/v1/audit/checkpoints', { key: KEYS.admin });
      const times: string[] = (res.body.checkpoints ?? []).map((c: { time: string }) => c.time);
      return times.some((time) => Date.now() - Date.parse(time) > 1_000) ? true : undefined;
    });
    const { stdout } = await runScript(apiExample!, arbiter.port, workDir);
    const result = JSON.parse(stdout);
    expect(result.archive, result.message).toMatchObject({ from_seq: 1, entries: expect.any(Number) });
    expect(result.archive.entries).toBeGreaterThan(0);
    await access(join(arbiter.dataDir, 'archives', result.archive.file));
  });

  it('runs the curl walkthrough as written (only the port and the arbiter binary path differ)', async () => {
    const script = await shellBlocks('Trying it with curl');
    expect(script).toContain('curl');
    const { stdout, stderr } = await runScript(script, arbiter.port, workDir);
    expect(stdout).not.toContain('"error"');
    for (const outcome of [
      '"outcome":"ALLOW"',
      '"outcome":"REQUIRE_CONFIRMATION"',
      '"outcome":"ESCALATE"',
      '"outcome":"DENY"',
    ]) {
      expect(stdout).toContain(outcome);
    }
    expect(stdout).toContain('"name":"tickets.create"');
    expect(stdout).toContain('"revoked":1');
    expect(stdout).toContain('"chain_verified":true');
    expect(stderr).toMatch(/verified: \d+ entries/);
  });

  it("ignores (.gitignore) every file the README's commands write into the checkout", async () => {
    const readme = await readFile(join(REPO, 'README.md'), 'utf8');
    const blocks = [...readme.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const spans = [...readme.replace(/```[a-z]*\n[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g)].map(
      (m) => m[1]!,
    );
    const code = [...blocks, ...spans].join('\n');
    // Where commands write: --out, --state, --data-dir and --junit arguments, and redirections.
    const targets = [
      ...code.matchAll(/(?:--out|--state|--data-dir|--junit)[ =]([^\s"'`]+)|(?:^|\s)>\s*([^\s&|;)`'"]+)/gm),
    ]
      .map((m) => (m[1] ?? m[2])!)
      // File names, not placeholders (FILE), numbers (`amount > 1000`) or absolute paths.
      .filter((name) => /^[A-Za-z0-9._-]+\/?$/.test(name) && /[./]/.test(name) && /[a-z]/.test(name));
    expect(targets).toEqual(expect.arrayContaining(['audit.jsonl', 'audit-signing.key', 'archives/']));
    const notIgnored = [...new Set(targets)].filter((name) => {
      const path = /\.(key|json|jsonl|xml|tlog-proof)$/.test(name) || name.endsWith('/') ? name : `${name}/`;
      return spawnSync('git', ['check-ignore', '--no-index', '-q', path], { cwd: REPO }).status !== 0;
    });
    expect(notIgnored).toEqual([]);
  });
});
