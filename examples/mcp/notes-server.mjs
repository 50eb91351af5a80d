#!/usr/bin/env node
// An example MCP server for the tool proxy: notes kept in memory, four tools, served over
// Streamable HTTP at http://HOST:PORT/mcp. Run it with `node examples/mcp/notes-server.mjs
// [PORT] [--receipt-vkey FILE]` (default port 3001) and put Arbiter in front of it (README,
// "Governing MCP tools"). With --receipt-vkey (Arbiter's verifier key), it refuses every call
// without a receipt of Arbiter's that holds for it (receipt-check.mjs).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Buffer } from 'node:buffer';
import process from 'node:process';
import { pathToFileURL, URL } from 'node:url';
import { parseArgs } from 'node:util';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { parseVerifierKey, RECEIPT_META, receiptRefusal } from './receipt-check.mjs';

const title = { type: 'string', minLength: 1, maxLength: 200 };

/** The tools, with the annotations `arbiter mcp import` derives risk levels from. */
export const NOTES_TOOLS = [
  {
    name: 'list_notes',
    description: 'List the titles of all notes',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'add_note',
    description: 'Add a note, or replace the note with the same title',
    inputSchema: {
      type: 'object',
      required: ['title', 'text'],
      properties: { title, text: { type: 'string', maxLength: 10000 } },
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: false },
  },
  {
    name: 'delete_note',
    description: 'Delete one note',
    inputSchema: {
      type: 'object',
      required: ['title'],
      properties: { title },
      additionalProperties: false,
    },
    annotations: { destructiveHint: true },
  },
  {
    name: 'purge_notes',
    description: 'Delete every note',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { destructiveHint: true },
  },
];

/**
 * Starts the server. `calls` lists every tools/call it accepted, in order (with its receipt,
 * if it had one): what reached the upstream, for tests that check what the proxy let through.
 * With `receiptVkey` (Arbiter's verifier key) it accepts only calls with a receipt that holds.
 * @param {{ port?: number, host?: string, receiptVkey?: string }} [options]
 */
export async function startNotesServer(options = {}) {
  const host = options.host ?? '127.0.0.1';
  const receiptKey = options.receiptVkey === undefined ? undefined : parseVerifierKey(options.receiptVkey);
  /** @type {Map<string, string>} */
  const notes = new Map();
  /** @type {Array<{ tool: string, arguments: Record<string, unknown> }>} */
  const calls = [];
  /** @type {Map<string, StreamableHTTPServerTransport>} */
  const sessions = new Map();

  const http = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err));
    });
  });

  /** @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res */
  async function handle(req, res) {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    let body;
    if (req.method === 'POST') {
      try {
        body = JSON.parse(await readBody(req));
      } catch {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('body is not JSON');
        return;
      }
    }
    const sessionId = req.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId !== undefined || !isInitializeRequest(body)) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('no such session; initialize first');
        return;
      }
      const opened = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, opened),
      });
      opened.onclose = () => void (opened.sessionId && sessions.delete(opened.sessionId));
      await notesServer(notes, calls, receiptKey).connect(opened);
      transport = opened;
    }
    await transport.handleRequest(req, res, body);
  }

  await new Promise((resolve) => http.listen(options.port ?? 0, host, () => resolve(undefined)));
  const address = /** @type {import('node:net').AddressInfo} */ (http.address());
  return {
    url: `http://${host}:${address.port}/mcp`,
    port: address.port,
    calls,
    notes,
    async close() {
      await Promise.all([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise((resolve) => http.close(() => resolve(undefined)));
    },
  };
}

/**
 * @param {Map<string, string>} notes
 * @param {Array<{ tool: string, arguments: Record<string, unknown>, receipt?: unknown }>} calls
 * @param {ReturnType<typeof parseVerifierKey>} [receiptKey]
 */
function notesServer(notes, calls, receiptKey) {
  const server = new Server({ name: 'notes', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: NOTES_TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const args = request.params.arguments ?? {};
    const refused = receiptRefusal(receiptKey, request.params);
    if (refused) return refused;
    const receipt = request.params._meta?.[RECEIPT_META];
    calls.push({ tool: request.params.name, arguments: args, ...(receipt === undefined ? {} : { receipt }) });
    switch (request.params.name) {
      case 'list_notes':
        return text(notes.size === 0 ? 'no notes' : [...notes.keys()].join('\n'));
      case 'add_note':
        notes.set(String(args.title), String(args.text));
        return text(`added "${String(args.title)}"`);
      case 'delete_note':
        if (!notes.delete(String(args.title))) return text(`no note "${String(args.title)}"`, true);
        return text(`deleted "${String(args.title)}"`);
      case 'purge_notes': {
        const count = notes.size;
        notes.clear();
        return text(`deleted ${count} notes`);
      }
      default:
        return text(`unknown tool ${request.params.name}`, true);
    }
  });
  return server;
}

/** @param {string} value @param {boolean} [isError] */
function text(value, isError = false) {
  return { content: [{ type: 'text', text: value }], isError };
}

/** @param {import('node:http').IncomingMessage} req @returns {Promise<string>} */
async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values, positionals } = parseArgs({
    options: { 'receipt-vkey': { type: 'string' } },
    allowPositionals: true,
  });
  const port = Number(positionals[0] ?? 3001);
  const vkeyFile = values['receipt-vkey'];
  const receiptVkey = vkeyFile === undefined ? undefined : readFileSync(vkeyFile, 'utf8');
  const started = await startNotesServer({ port, ...(receiptVkey ? { receiptVkey } : {}) });
  process.stdout.write(`notes MCP server at ${started.url}\n`);
}
