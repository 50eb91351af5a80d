import { execFile } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from './processes.js';

const run = promisify(execFile);
export const WRK = '/usr/bin/wrk';

export interface WrkResult {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  non2xx: number;
  socketErrors: number;
}

export interface WrkOptions {
  url: string;
  /** POST bodies, sent round-robin (JSON strings). */
  bodies: readonly string[];
  headers: Record<string, string>;
  connections: number;
  durationSec: number;
  threads?: number;
}

function luaString(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** A wrk Lua script that POSTs the bodies round-robin with the headers. */
function script(options: WrkOptions): string {
  const headers = Object.entries({ 'Content-Type': 'application/json', ...options.headers })
    .map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`)
    .join('\n');
  return `
wrk.method = "POST"
${headers}
local bodies = { ${options.bodies.map(luaString).join(',\n')} }
local i = 0
request = function()
  i = i % #bodies + 1
  return wrk.format(nil, nil, nil, bodies[i])
end
`;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function latencyMs(text: string, label: string): number {
  const match = new RegExp(`^\\s*${label}\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(text);
  if (!match) throw new Error(`wrk output has no ${label} latency:\n${text}`);
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}

export async function runWrk(options: WrkOptions): Promise<WrkResult> {
  const dir = await tempDir('arbiter-bench-wrk-');
  const scriptPath = join(dir, 'post.lua');
  try {
    await writeFile(scriptPath, script(options));
    const { stdout } = await run(
      WRK,
      [
        `-t${options.threads ?? 1}`,
        `-c${options.connections}`,
        `-d${options.durationSec}s`,
        '--latency',
        '--timeout',
        '10s',
        '-s',
        scriptPath,
        options.url,
      ],
      { maxBuffer: 1 << 20 },
    );
    const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? 0);
    const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
    return {
      requestsPerSec: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? 0),
      p50Ms: latencyMs(stdout, '50%'),
      p99Ms: latencyMs(stdout, '99%'),
      requests,
      non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0),
      socketErrors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
