import { execFile, spawn } from 'node:child_process';
import { cp, mkdir, readdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { parseServeOptions } from '../../src/cli/serve-options.js';
import {
  call,
  EXAMPLE_KEYS,
  KEYS,
  REPO,
  removeDir,
  tempDir,
  tempManifests,
} from '../support/arbiter-process.js';

interface Instruction {
  keyword: string;
  args: string;
}

interface Stage {
  image: string;
  name: string;
  instructions: Instruction[];
}

/** The Dockerfile's stages and instructions (continuation lines joined, comments dropped). */
async function readDockerfile(): Promise<Stage[]> {
  const text = (await readFile(join(REPO, 'Dockerfile'), 'utf8')).replace(/\\\n\s*/g, ' ');
  const stages: Stage[] = [];
  for (const line of text.split('\n')) {
    const match = /^([A-Z]+)\s+(.*)$/.exec(line.trim());
    if (!match || line.trim().startsWith('#')) continue;
    const [, keyword, args] = match as unknown as [string, string, string];
    if (keyword === 'FROM') {
      const [image, , name] = args.split(/\s+/);
      stages.push({ image: image!, name: name ?? String(stages.length), instructions: [] });
    } else {
      stages.at(-1)?.instructions.push({ keyword, args });
    }
  }
  return stages;
}

const argsOf = (stage: Stage, keyword: string) =>
  stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);

function run(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('sh', ['-c', command], { cwd, env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command}: ${error.message}\n${stdout}\n${stderr}`));
      else resolve(stdout + stderr);
    });
  });
}

const cleanup: string[] = [];
afterAll(async () => {
  for (const dir of cleanup) await removeDir(dir);
});

describe('Dockerfile', () => {
  it('builds an image whose steps work: production install in a clean folder, start as the entrypoint does, probe, propose', async () => {
    const stages = await readDockerfile();
    const [build, deps, runtime] = stages;
    expect(stages.map((s) => s.name)).toEqual(['build', 'deps', '2']);
    expect(argsOf(build!, 'RUN')).toContain('npm run build');

    // --- deps stage, as written, in a clean folder (WORKDIR /app) -----------------------------
    const root = await tempDir('arbiter-image-');
    cleanup.push(root);
    const stageDir = (stage: string) => join(root, stage);
    for (const stage of ['deps', 'runtime']) await mkdir(stageDir(stage));
    expect(argsOf(deps!, 'WORKDIR')).toEqual(['/app']);
    for (const copy of argsOf(deps!, 'COPY')) {
      const sources = copy.split(/\s+/).slice(0, -1);
      for (const source of sources) await cp(join(REPO, source), join(stageDir('deps'), source));
    }
    const [install] = argsOf(deps!, 'RUN');
    expect(install).toMatch(/npm ci --omit=dev --ignore-scripts/);
    // npm's cache in the test's folder: `npm cache clean` must not touch the user's.
    await run(install!, stageDir('deps'), { ...process.env, npm_config_cache: join(root, 'npm-cache') });

    // --- runtime stage: its COPY lines, with the build stage's dist/ being `npm run build`'s --
    expect(argsOf(runtime!, 'WORKDIR')).toEqual(['/app']);
    for (const copy of argsOf(runtime!, 'COPY')) {
      const from = /^--from=(\S+)\s+/.exec(copy)?.[1];
      const [source, destination] = copy.replace(/^--from=\S+\s+/, '').split(/\s+/) as [string, string];
      const origin =
        from === 'deps'
          ? join(stageDir('deps'), source.replace(/^\/app\//, ''))
          : from === 'build'
            ? join(REPO, source.replace(/^\/app\//, '')) // `npm run build` (pretest) made it
            : join(REPO, source);
      const target = destination.endsWith('/')
        ? join(stageDir('runtime'), destination, source.split('/').at(-1)!)
        : join(stageDir('runtime'), destination);
      await cp(origin, target, { recursive: true });
    }
    // The only RUN of the runtime stage prepares the default data dir (not reproducible here).
    expect(argsOf(runtime!, 'RUN')).toEqual([
      'mkdir -p /var/lib/arbiter && chown 1000:1000 /var/lib/arbiter',
    ]);
    expect((await readdir(stageDir('runtime'))).sort()).toEqual(['dist', 'node_modules', 'package.json']);

    // Production dependencies only: every package the lockfile marks dev-only is absent.
    const lock = JSON.parse(await readFile(join(REPO, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean; optional?: boolean }>;
    };
    const installed = (path: string) => existsSync(join(stageDir('runtime'), path, 'package.json'));
    const packages = Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/'));
    const devOnly = packages.filter(([, entry]) => entry.dev).map(([path]) => path);
    const production = packages.filter(([, entry]) => !entry.dev && !entry.optional).map(([path]) => path);
    expect(devOnly).toEqual(expect.arrayContaining(['node_modules/typescript', 'node_modules/vitest']));
    expect(devOnly.filter(installed)).toEqual([]);
    expect(production.filter((path) => !installed(path))).toEqual([]);

    // Non-root, by number (runAsNonRoot cannot check a user name); `node dist/...` entrypoint.
    const [user] = argsOf(runtime!, 'USER');
    expect(user).toMatch(/^[1-9]\d*(:\d+)?$/);
    const entrypoint = JSON.parse(argsOf(runtime!, 'ENTRYPOINT')[0]!) as string[];
    expect(entrypoint).toEqual(['node', 'dist/cli/main.js']);
    const command = JSON.parse(argsOf(runtime!, 'CMD')[0]!) as string[];
    expect(command[0]).toBe('serve');
    expect(parseServeOptions(command.slice(1), {})).toMatchObject({
      port: 8080,
      dataDir: '/var/lib/arbiter',
    });
    const env = Object.fromEntries(argsOf(runtime!, 'ENV').map((e) => e.split('=') as [string, string]));
    expect(env).toEqual({ NODE_ENV: 'production' });

    // --- start it as the entrypoint does (other paths, a free port) ------------------------
    const manifests = await tempManifests();
    const dataDir = await tempDir();
    cleanup.push(manifests, dataDir);
    const [, ...entryArgs] = entrypoint;
    const child = spawn(
      process.execPath,
      [
        ...entryArgs,
        'serve',
        '--manifests',
        manifests,
        '--api-keys',
        EXAMPLE_KEYS,
        '--data-dir',
        dataDir,
        '--port',
        '0',
        '--host',
        '127.0.0.1',
      ],
      {
        cwd: stageDir('runtime'),
        env: { PATH: process.env.PATH, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const logs: string[] = [];
    createInterface({ input: child.stderr }).on('line', (line) => logs.push(line));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`did not start:\n${logs.join('\n')}`)), 20_000);
        createInterface({ input: child.stdout }).on('line', (line) => {
          logs.push(line);
          const match = /"port":(\d+).*"msg":"arbiter listening/.exec(line);
          if (match) {
            clearTimeout(timer);
            resolve(Number(match[1]));
          }
        });
        child.once('exit', (code) => reject(new Error(`exited with ${code}:\n${logs.join('\n')}`)));
      });
      const url = `http://127.0.0.1:${port}`;
      expect((await call(url, 'GET', '/healthz')).status).toBe(200);
      expect((await call(url, 'GET', '/readyz')).status).toBe(200);

      // The HEALTHCHECK command, as Docker would run it (on this port).
      const healthcheck = /CMD\s+(\[.*\])$/.exec(argsOf(runtime!, 'HEALTHCHECK')[0]!)?.[1];
      const [node, ...checkArgs] = JSON.parse(healthcheck!.replace('8080', String(port))) as string[];
      expect(node).toBe('node');
      // Exec form: no shell, as Docker runs it; exit code 0 means healthy.
      const exitCode = await new Promise<number | string | null | undefined>((resolve) => {
        execFile(process.execPath, checkArgs, (error) => resolve(error ? error.code : 0));
      });
      expect(exitCode).toBe(0);

      const decision = await call(url, 'POST', '/api/v1/governance/propose', {
        key: KEYS.agent,
        body: {
          actor: { id: 'agent-001', type: 'ai-agent' },
          action: { capability: 'database.query', parameters: { query: 'select 1' } },
        },
      });
      expect(decision.status, JSON.stringify(decision.body)).toBe(200);
      expect(decision.body.outcome).toBe('ALLOW');
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
    }
  }, 300_000);
});
