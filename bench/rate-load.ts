import { Agent, request } from 'node:http';
import { percentile } from './support/report.js';

/**
 * A constant-rate load generator (what wrk2 does and wrk does not), run as its own
 * process so it does not share the server's event loop. Each request is due at
 * start + i / rate; its latency counts from when it was due, not from when it went
 * out, so a stalled server cannot hide its stall (no coordinated omission).
 *
 * argv[2]: JSON of RateLoadOptions. Prints one line of JSON: RateLoadResult.
 */
export interface RateLoadOptions {
  url: string;
  bodies: string[];
  headers: Record<string, string>;
  ratePerSec: number;
  durationSec: number;
  maxSockets: number;
}

export interface RateLoadResult {
  due: number;
  completed: number;
  errors: number;
  non2xx: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  achievedPerSec: number;
}

const options = JSON.parse(process.argv[2] ?? '{}') as RateLoadOptions;
const agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets });
const target = new URL(options.url);
const bodies = options.bodies.map((b) => Buffer.from(b));
const latencies: number[] = [];
let errors = 0;
let non2xx = 0;
let inFlight = 0;

function send(dueAt: number, index: number): void {
  const body = bodies[index % bodies.length]!;
  inFlight += 1;
  const req = request(
    {
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: 'POST',
      agent,
      headers: { ...options.headers, 'content-type': 'application/json', 'content-length': body.length },
    },
    (res) => {
      res.resume();
      res.on('end', () => {
        inFlight -= 1;
        if (res.statusCode !== 200) non2xx += 1;
        latencies.push(performance.now() - dueAt);
      });
    },
  );
  req.on('error', () => {
    inFlight -= 1;
    errors += 1;
  });
  req.end(body);
}

const start = performance.now() + 50;
const total = Math.round(options.ratePerSec * options.durationSec);
const intervalMs = 1000 / options.ratePerSec;
let next = 0;
const tick = setInterval(() => {
  const now = performance.now();
  while (next < total && start + next * intervalMs <= now) {
    send(start + next * intervalMs, next);
    next += 1;
  }
  if (next >= total) {
    clearInterval(tick);
    void finish();
  }
}, 1);

async function finish(): Promise<void> {
  const deadline = performance.now() + 10_000;
  while (inFlight > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const elapsedSec = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const result: RateLoadResult = {
    due: total,
    completed: latencies.length,
    errors,
    non2xx,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies.at(-1) ?? Number.NaN,
    achievedPerSec: latencies.length / elapsedSec,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  agent.destroy();
}
