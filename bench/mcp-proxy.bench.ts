import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { NotesServer } from '../examples/mcp/notes-server.mjs';
import type * as ReceiptCheckExample from '../examples/mcp/receipt-check.mjs';
import { formatVerifierKey, generateSigningKey, verifierOf } from '../src/audit/note/note-keys.js';
import { checkReceipt } from '../src/mcp/receipt-check.js';
import { signReceipt } from '../src/mcp/receipt.js';
import { startRedisServer } from '../test/env/redis-server.js';
import { REPO, startArbiter } from './support/processes.js';
import { percentile, type Report } from './support/report.js';
import type { BenchSettings } from './support/settings.js';

/** The example server's module, from the repository (tsc does not copy .mjs into the bench build). */
async function notesModule(): Promise<{ startNotesServer(): Promise<NotesServer> }> {
  return import(pathToFileURL(join(REPO, 'examples/mcp/notes-server.mjs')).href) as Promise<{
    startNotesServer(): Promise<NotesServer>;
  }>;
}

/** The protocol revisions measured: a 2026-07-28 client (stateless) and a 2025-11-25 one (a session). */
const REVISIONS = ['2026-07-28', '2025-11-25'] as const;
type Revision = (typeof REVISIONS)[number];

/** The SDK v2 client, pinned to one revision. */
async function connect(
  url: string,
  revision: Revision,
  headers: Record<string, string> = {},
): Promise<Client> {
  const client = new Client(
    { name: 'bench-agent', version: '1.0.0' },
    revision === '2026-07-28' ? { versionNegotiation: { mode: { pin: revision } } } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  if (client.getNegotiatedProtocolVersion() !== revision)
    throw new Error(
      `mcp-proxy bench: ${url} negotiated ${client.getNegotiatedProtocolVersion()}, not ${revision}`,
    );
  return client;
}

/** Sequential calls of one read-only tool; the latency of each in ms. */
async function callLatencies(client: Client, count: number): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const result = await client.callTool({ name: 'list_notes', arguments: {} });
    ms.push(performance.now() - t0);
    if (result.isError)
      throw new Error(`mcp-proxy bench: list_notes failed: ${JSON.stringify(result.content)}`);
  }
  return ms;
}

/**
 * 13. The tool proxy: an MCP tool call through Arbiter (authentication, the decision, its
 * audit entry, forwarding, the execution entry) against the same call made directly to
 * the upstream MCP server, both with the MCP SDK's client, one call at a time, for a
 * client of each protocol revision; with the embedded file audit (two fsyncs per call)
 * and with Redis (where a 2025-11-25 session is also looked up in Redis on each request).
 */
export async function mcpProxyBench(report: Report, settings: BenchSettings): Promise<void> {
  await receiptCost(report, settings);
  const notes = await (await notesModule()).startNotesServer();
  const manifests = await mkdtemp(join(tmpdir(), 'arbiter-bench-mcp-'));
  await cp(join(REPO, 'examples/mcp/manifests'), manifests, { recursive: true });
  const redis = await startRedisServer({ appendfsync: 'everysec' });
  try {
    await throughArbiter(report, settings, notes, manifests, 'file audit', {});
    await throughArbiter(report, settings, notes, manifests, 'Redis audit', { redisUrl: redis.url });
  } finally {
    await redis.dispose();
    await notes.close();
    await rm(manifests, { recursive: true, force: true });
  }
}

async function throughArbiter(
  report: Report,
  settings: BenchSettings,
  notes: NotesServer,
  manifests: string,
  label: string,
  options: { redisUrl?: string },
): Promise<void> {
  const count = settings.quick ? 200 : 2_000;
  const arbiter = await startArbiter({
    manifests,
    ...options,
    extraArgs: ['--mcp-server', `notes=${notes.url}`],
  });
  try {
    for (const revision of REVISIONS) {
      const direct = await connect(notes.url, revision);
      const proxied = await connect(`${arbiter.url}/mcp/notes`, revision, {
        Authorization: 'Bearer dev-agent-key',
      });
      try {
        await measure(report, count, `${revision}, ${label}`, arbiter.url, direct, proxied);
      } finally {
        await direct.close();
        await proxied.close();
      }
    }
  } finally {
    await arbiter.stop();
  }
}

/** One revision against one Arbiter: `count` calls each way, and the rows they give. */
async function measure(
  report: Report,
  count: number,
  label: string,
  arbiterUrl: string,
  direct: Client,
  proxied: Client,
): Promise<void> {
  // Warm both paths, then interleave rounds so that drift hits both alike.
  await callLatencies(direct, count / 10);
  await callLatencies(proxied, count / 10);
  const through: number[] = [];
  const straight: number[] = [];
  const rounds = 5;
  const before = await metricSums(arbiterUrl);
  for (let round = 0; round < rounds; round++) {
    straight.push(...(await callLatencies(direct, count / rounds)));
    through.push(...(await callLatencies(proxied, count / rounds)));
  }
  const after = await metricSums(arbiterUrl);
  const [a, b] = [through, straight].map((ms) => [...ms].sort((x, y) => x - y));
  for (const p of [50, 99]) {
    report.add({
      benchmark: 'mcp-proxy',
      metric: `tools/call p${p} through Arbiter, ${label} (${count} sequential calls; baseline: the upstream directly)`,
      arbiter: percentile(a!, p),
      baseline: percentile(b!, p),
      unit: 'ms',
      higherIsBetter: false,
    });
  }
  report.add({
    benchmark: 'mcp-proxy',
    metric: `added per call, p50, ${label} (decision, two audit entries, one more hop)`,
    arbiter: percentile(a!, 50) - percentile(b!, 50),
    unit: 'ms',
  });
  report.add({
    benchmark: 'mcp-proxy',
    metric: `of which audit appends (two per call), mean, ${label}`,
    arbiter: ((after.append - before.append) / count) * 1000,
    unit: 'ms',
  });
  report.add({
    benchmark: 'mcp-proxy',
    metric: `upstream call as the proxy sees it, mean, ${label} (baseline: the direct call, mean)`,
    arbiter: ((after.upstream - before.upstream) / count) * 1000,
    baseline: straight.reduce((sum, ms) => sum + ms, 0) / straight.length,
    unit: 'ms',
    higherIsBetter: false,
  });
}

/** Sums of the histograms that split a proxied call: audit appends and upstream calls (seconds). */
async function metricSums(url: string): Promise<{ append: number; upstream: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const sum = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
  return {
    append: sum(/^arbiter_audit_append_duration_seconds_sum (\S+)$/m),
    upstream: sum(/^arbiter_mcp_upstream_duration_seconds_sum\{server="notes"\} (\S+)$/m),
  };
}

/**
 * 13b. A signed receipt's cost per forwarded call, on its own (no I/O): what the proxy adds
 * to build and sign one (RFC 8785 JSON and SHA-256 of the arguments, an Ed25519 signature),
 * and what checking one costs, with Arbiter's checker (arbiter receipt verify) and with the
 * standalone one an MCP server copies (examples/mcp/receipt-check.mjs).
 */
async function receiptCost(report: Report, settings: BenchSettings): Promise<void> {
  const count = settings.quick ? 2_000 : 20_000;
  const key = generateSigningKey('bench.example/audit');
  const verifier = verifierOf(key);
  const example = (await import(
    pathToFileURL(join(REPO, 'examples/mcp/receipt-check.mjs')).href
  )) as typeof ReceiptCheckExample;
  const exampleKey = example.parseVerifierKey(formatVerifierKey(key));
  const args = {
    title: 'groceries',
    text: 'milk, eggs, bread and a note of a few hundred characters '.repeat(4),
  };
  const facts = {
    decision: '6f1c3d2e-8a7b-4c5d-9e0f-112233445566',
    audit: 'aud_a1b2c3d4-0000-4000-8000-000000000001',
    actor: 'agent-001',
    capability: 'mcp.notes.add_note',
    arguments: args,
    issued: new Date(),
  };
  const receipt = signReceipt(facts, key);
  const measures: [string, () => unknown][] = [
    ['build and sign', () => signReceipt({ ...facts, issued: new Date() }, key)],
    ['check (arbiter receipt verify)', () => checkReceipt(receipt, verifier, { arguments: args })],
    [
      'check (examples/mcp/receipt-check.mjs)',
      () => example.checkReceipt(receipt, exampleKey, { arguments: args, tool: 'add_note' }),
    ],
  ];
  for (const [what, run] of measures) {
    for (let i = 0; i < count / 10; i++) run(); // warm up
    const us: number[] = [];
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      run();
      us.push((performance.now() - t0) * 1000);
    }
    us.sort((a, b) => a - b);
    report.add({
      benchmark: 'mcp-proxy',
      metric: `receipt, ${what}, p50 (${count} receipts of ${receipt.length} bytes)`,
      arbiter: percentile(us, 50),
      unit: 'µs',
      higherIsBetter: false,
    });
  }
}
