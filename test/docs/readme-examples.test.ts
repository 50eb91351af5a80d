import { execFile } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLI,
  REPO,
  removeDir,
  startArbiter,
  tempDir,
  type ArbiterProcess,
} from '../support/arbiter-process.js';

let arbiter: ArbiterProcess;
let workDir: string;

/** The sh blocks of one README section, as a user would paste them. */
async function shellBlocks(section: string): Promise<string> {
  const readme = await readFile(join(REPO, 'README.md'), 'utf8');
  const start = readme.indexOf(`## ${section}`);
  const end = readme.indexOf('\n## ', start + 1);
  const text = readme.slice(start, end === -1 ? undefined : end);
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).join('\n');
}

beforeAll(async () => {
  workDir = await tempDir('arbiter-readme-');
  const dataDir = join(workDir, '.arbiter-data');
  await mkdir(dataDir);
  arbiter = await startArbiter({ dataDir });
});
afterAll(async () => {
  await arbiter.stop();
  await removeDir(workDir);
  await removeDir(arbiter.manifestsDir);
});

describe('README', () => {
  it('runs the curl walkthrough as written (only the port and the arbiter binary path differ)', async () => {
    const script = (await shellBlocks('Trying it with curl'))
      .replaceAll('localhost:8080', `127.0.0.1:${arbiter.port}`)
      .replaceAll('npx arbiter', `node ${CLI}`);
    expect(script).toContain('curl');
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      execFile('bash', ['-euo', 'pipefail', '-c', script], { cwd: workDir }, (error, out, err) => {
        if (error) reject(new Error(`${error.message}\n${out}\n${err}`));
        else resolve({ stdout: out, stderr: err });
      });
    });
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
});
