import { spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { startNotesServer, type NotesServer } from '../../examples/mcp/notes-server.mjs';
import * as example from '../../examples/mcp/receipt-check.mjs';
import { formatSigningKey, formatVerifierKey, generateSigningKey } from '../../src/audit/note/note-keys.js';
import { signReceipt } from '../../src/mcp/receipt.js';
import {
  call,
  CLI,
  KEYS,
  REPO,
  removeDir,
  startArbiter,
  type ArbiterProcess,
} from '../support/arbiter-process.js';

// Arbiter signs a receipt for every call it forwards; the example notes server, given the
// verifier key, accepts only calls whose receipt holds: governed ones.
const key = generateSigningKey('arbiter.test/receipts');
const other = generateSigningKey('arbiter.test/receipts');
const vkey = formatVerifierKey(key);
const RECEIPT_META = 'dev.arbiter/receipt';
let notes: NotesServer;
let arbiter: ArbiterProcess;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arbiter-receipts-'));
  await cp(join(REPO, 'examples/mcp/manifests'), join(dir, 'manifests'), { recursive: true });
  // The title of a note to delete is sensitive: recorded masked.
  const imported = join(dir, 'manifests/capabilities.yaml');
  const docs = parseAllDocuments(await readFile(imported, 'utf8')).map((d) => d.toJS());
  const deleteNote = docs.find((d) => d.spec.name === 'mcp.notes.delete_note');
  deleteNote.spec.parameterSchema.properties.title['x-arbiter-sensitive'] = true;
  await writeFile(imported, docs.map((d) => stringify(d)).join('---\n'));
  // An actor whose id no receipt can carry: a tab is a control character, which notes refuse.
  await writeFile(
    join(dir, 'manifests/tab-actor.yaml'),
    `apiVersion: governance.arbiter.dev/v1alpha1
kind: ActorGrant
metadata: {name: tab-actor}
spec:
  actor: {id: "agent\\ttab", type: ai-agent}
  grants: [{capability: mcp.notes.list_notes}]
`,
  );
  await writeFile(join(dir, 'signing.key'), formatSigningKey(key), { mode: 0o600 });
  await writeFile(join(dir, 'vkey'), `${vkey}\n`);
  notes = await startNotesServer({ receiptVkey: vkey });
  arbiter = await startArbiter({
    manifestsDir: join(dir, 'manifests'),
    args: ['--mcp-server', `notes=${notes.url}`, '--audit-signing-key', join(dir, 'signing.key')],
  });
}, 30_000);

afterAll(async () => {
  await arbiter?.stop();
  await notes?.close();
  if (arbiter) await removeDir(arbiter.dataDir);
  await removeDir(dir);
});

async function connect(url: string, headers: Record<string, string> = {}) {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}
const agent = () => connect(`${arbiter.url}/mcp/notes`, { Authorization: `Bearer ${KEYS.agent}` });

async function callTool(client: Client, name: string, args: Record<string, unknown>, receipt?: string) {
  const meta = receipt === undefined ? {} : { _meta: { [RECEIPT_META]: receipt } };
  return (await client.callTool({ name, arguments: args, ...meta })) as CallToolResult;
}
const textOf = (result: CallToolResult) =>
  result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
const decisionOf = (result: CallToolResult) => result._meta?.['dev.arbiter/decision_id'] as string;

async function trail(decisionId: string) {
  const res = await call(arbiter.url, 'GET', `/api/v1/audit/log/${decisionId}`, { key: KEYS.auditor });
  expect(res.status).toBe(200);
  return res.body;
}

/** `arbiter receipt verify ARGS` as a user runs it, the receipt on standard input when given. */
function receiptVerify(args: string[], stdin?: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, 'receipt', 'verify', ...args], { cwd: REPO });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

/** A governed add_note: its result, its receipt as the trail shows it, and that trail. */
async function governedAdd(title: string) {
  const client = await agent();
  try {
    const args = { title, text: 'milk' };
    const result = await callTool(client, 'add_note', args);
    expect(textOf(result)).toBe(`added "${title}"`);
    const shown = await trail(decisionOf(result));
    return { args, result, shown, receipt: shown.execution.receipt as string };
  } finally {
    await client.close();
  }
}

describe('receipts of forwarded calls', () => {
  it('the upstream accepts a governed call: its receipt names the decision, its audit entry and the call', async () => {
    const before = notes.calls.length;
    const { args, result, shown, receipt } = await governedAdd('groceries');
    // What the upstream received is what the trail shows.
    expect(notes.calls.slice(before)).toEqual([{ tool: 'add_note', arguments: args, receipt }]);
    const checked = example.checkReceipt(receipt, example.parseVerifierKey(vkey), {
      arguments: args,
      tool: 'add_note',
    });
    expect(checked).toMatchObject({
      decision: decisionOf(result),
      audit: shown.integrity.audit_ref,
      actor: 'agent-001',
      capability: 'mcp.notes.add_note',
      signer: 'arbiter.test/receipts',
    });
    expect(Date.parse(checked.issued)).toBeLessThanOrEqual(Date.parse(shown.execution.completed_at));
    // The decision record shows it as well.
    const record = await call(arbiter.url, 'GET', `/api/v1/governance/decisions/${decisionOf(result)}`, {
      key: KEYS.reviewer,
    });
    expect(record.body.audit.execution.receipt).toBe(receipt);
  });

  it('the upstream refuses a call sent to it directly, one with a receipt of another key, and one with changed arguments', async () => {
    const { args, receipt } = await governedAdd('to-copy');
    const direct = await connect(notes.url);
    try {
      const before = notes.calls.length;
      const bare = await callTool(direct, 'add_note', args);
      expect(bare.isError).toBe(true);
      expect(textOf(bare)).toMatch(/^refused: the call carries no receipt \(receipt_missing\)$/);
      const forged = signReceipt(
        {
          decision: '00000000-0000-4000-8000-000000000000',
          audit: '00000000-0000-4000-8000-000000000001',
          actor: 'agent-001',
          capability: 'mcp.notes.add_note',
          arguments: args,
          issued: new Date(),
        },
        other,
      );
      expect(textOf(await callTool(direct, 'add_note', args, forged))).toMatch(/\(receipt_unverified\)$/);
      const changed = await callTool(direct, 'add_note', { ...args, text: 'wine' }, receipt);
      expect(textOf(changed)).toBe('refused: the receipt is for other arguments (arguments_mismatch)');
      const elsewhere = await callTool(direct, 'delete_note', { title: 'to-copy' }, receipt);
      expect(textOf(elsewhere)).toMatch(/\(capability_mismatch\)$/);
      expect(notes.calls.length).toBe(before);
      expect(notes.notes.get('to-copy')).toBe('milk');
    } finally {
      await direct.close();
    }
  });

  it('an escalated call forwarded after approval carries the receipt of the decision that let it through; the trail keeps it out when the arguments are sensitive', async () => {
    notes.notes.set('old', 'to delete');
    const client = await agent();
    try {
      const waiting = await callTool(client, 'delete_note', { title: 'old' });
      expect(textOf(waiting)).toContain('waits for review');
      const approval = await call(
        arbiter.url,
        'POST',
        `/api/v1/governance/decisions/${decisionOf(waiting)}/approve`,
        { key: KEYS.reviewer, body: {} },
      );
      expect(approval.status).toBe(200);
      const before = notes.calls.length;
      const forwarded = await callTool(client, 'delete_note', { title: 'old' });
      expect(textOf(forwarded)).toBe('deleted "old"');
      const [received] = notes.calls.slice(before);
      const shown = await trail(decisionOf(forwarded));
      const checked = example.checkReceipt(received!.receipt, example.parseVerifierKey(vkey));
      expect(checked).toMatchObject({ decision: decisionOf(forwarded), audit: shown.integrity.audit_ref });
      expect(shown.decision.reason).toContain(`(decision ${decisionOf(waiting)})`);
      // Its SHA-256 over the title could be checked against guesses of the masked title.
      expect(shown.request.action.parameters.title).toHaveProperty('masked');
      expect(shown.execution).toMatchObject({ status: 'completed', receipt: null });
    } finally {
      await client.close();
    }
  });

  it('a call Arbiter cannot sign a receipt for is not forwarded', async () => {
    const client = await connect(`${arbiter.url}/mcp/notes`, {
      Authorization: `Bearer ${KEYS.admin}`,
      'X-Arbiter-Actor': 'agent\ttab',
    });
    try {
      const before = notes.calls.length;
      const result = await callTool(client, 'list_notes', {});
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(
        "Arbiter could not sign a receipt for this call: a receipt's actor must be one line of text",
      );
      expect(result._meta?.['dev.arbiter/outcome']).toBe('ALLOW');
      expect(notes.calls.length).toBe(before);
    } finally {
      await client.close();
    }
  });

  it('arbiter receipt verify agrees: the receipt holds for its arguments, and not for others or another key', async () => {
    const { args, receipt } = await governedAdd('cli');
    await writeFile(join(dir, 'receipt'), receipt);
    await writeFile(join(dir, 'args.json'), JSON.stringify(args));
    await writeFile(join(dir, 'other-args.json'), JSON.stringify({ ...args, text: 'wine' }));
    const ok = await receiptVerify([
      '--vkey',
      join(dir, 'vkey'),
      '--arguments',
      join(dir, 'args.json'),
      join(dir, 'receipt'),
    ]);
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toMatch(
      /^verified: receipt of decision [0-9a-f-]{36} \(audit aud_[0-9a-f-]{36}\) for agent-001, mcp\.notes\.add_note, issued \S+, signed by arbiter\.test\/receipts; the arguments match\n$/,
    );
    expect(ok.code).toBe(0);
    // From standard input (as `jq -r .execution.receipt` writes it: one newline more), the key inline.
    const piped = await receiptVerify(['--vkey', vkey], `${receipt}\n`);
    expect(piped.code).toBe(0);
    const otherArgs = await receiptVerify(
      ['--vkey', vkey, '--arguments', join(dir, 'other-args.json')],
      receipt,
    );
    expect(otherArgs).toEqual({
      code: 1,
      stdout: '',
      stderr: 'NOT VERIFIED: the receipt is for other arguments\n',
    });
    const otherKey = await receiptVerify(['--vkey', formatVerifierKey(other)], receipt);
    expect(otherKey.code).toBe(1);
    expect(otherKey.stderr).toMatch(/^NOT VERIFIED: the receipt is not signed by arbiter\.test\/receipts/);
    const altered = await receiptVerify(['--vkey', vkey], receipt.replace('agent-001', 'agent-002'));
    expect(altered.code).toBe(1);
    expect((await receiptVerify(['--vkey', vkey], '')).stderr).toMatch(/^NOT VERIFIED: .*no blank line/);
  });

  it('arbiter receipt verify refuses a wrong command line with exit 2, and says which file it cannot read', async () => {
    const none = await receiptVerify([]);
    expect(none).toMatchObject({ code: 2 });
    expect(none.stderr).toBe(
      'arbiter receipt verify: --vkey is required (see arbiter receipt verify --help)\n',
    );
    const badKey = await receiptVerify(['--vkey', 'nonsense']);
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).toMatch(/^arbiter receipt verify: --vkey: /);
    const missing = await receiptVerify(['--vkey', vkey, join(dir, 'no-such-receipt')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /^arbiter receipt verify: \S*no-such-receipt: no such file or directory\n$/,
    );
    const help = await receiptVerify(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(
      'Usage: arbiter receipt verify --vkey VKEY [--arguments FILE] [--capability NAME] [FILE]',
    );
  });
});
