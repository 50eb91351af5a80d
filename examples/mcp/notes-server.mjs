#!/usr/bin/env node
// An example MCP server for the tool proxy: notes kept in memory, four tools, served over
// Streamable HTTP at http://HOST:PORT/mcp to clients of both protocol revisions (2026-07-28,
// and 2025-11-25 without sessions), with the official SDK v2. Run it with
// `node examples/mcp/notes-server.mjs [PORT] [--receipt-vkey FILE]` (default port 3001) and put
// Arbiter in front of it (README, "Governing MCP tools"). With --receipt-vkey (Arbiter's verifier
// key), it refuses every call without a receipt of Arbiter's that holds for it (receipt-check.mjs).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import process from 'node:process';
import { pathToFileURL, URL } from 'node:url';
import { parseArgs } from 'node:util';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';
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
      properties: { title, text: { type: 'string', maxLength: 10000 } },
      required: ['title', 'text'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: false },
  },
  {
    name: 'delete_note',
    description: 'Delete one note',
    inputSchema: {
      type: 'object',
      properties: { title },
      required: ['title'],
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
 * Starts the server. `calls` lists every tools/call it received, in order: what reached
 * the upstream, for tests that check what the proxy let through.
 * @param {{ port?: number, host?: string, receiptVkey?: string }} [options]
 */
export async function startNotesServer(options = {}) {
  const host = options.host ?? '127.0.0.1';
  /** @type {import('./notes-server.mjs').NotesState} */
  const state = {
    notes: new Map(),
    calls: [],
    ...(options.receiptVkey === undefined ? {} : { receiptKey: parseVerifierKey(options.receiptVkey) }),
  };
  // One fresh server instance per request: nothing is kept between requests but the notes.
  const mcp = createMcpHandler(() => notesServer(state));
  const serveMcp = toNodeHandler(mcp);

  const http = createServer((req, res) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    void serveMcp(req, res);
  });

  await new Promise((resolve) => http.listen(options.port ?? 0, host, () => resolve(undefined)));
  const address = /** @type {import('node:net').AddressInfo} */ (http.address());
  return {
    url: `http://${host}:${address.port}/mcp`,
    port: address.port,
    calls: state.calls,
    notes: state.notes,
    async close() {
      await mcp.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(() => resolve(undefined)));
    },
  };
}

/**
 * The MCP server of one request: tools only.
 * @param {import('./notes-server.mjs').NotesState} state
 */
function notesServer(state) {
  const server = new Server({ name: 'notes', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', () => ({ tools: NOTES_TOOLS }));
  server.setRequestHandler('tools/call', (request) => callNotesTool(state, request.params));
  return server;
}

/**
 * Answers one tools/call and records it in `state.calls`. Exported so that an MCP server
 * built another way (the tests' SDK v1 upstream) serves the same tools.
 * @param {import('./notes-server.mjs').NotesState} state
 * @param {{ name: string, arguments?: Record<string, unknown>, _meta?: Record<string, unknown> }} params
 */
export function callNotesTool(state, params) {
  const { notes, calls } = state;
  const args = params.arguments ?? {};
  // Given Arbiter's key, only a call Arbiter governed (its receipt holds for it) is served.
  const refused = receiptRefusal(state.receiptKey, params);
  if (refused) return refused;
  const receipt = params._meta?.[RECEIPT_META];
  calls.push({ tool: params.name, arguments: args, ...(receipt === undefined ? {} : { receipt }) });
  switch (params.name) {
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
      return text(`unknown tool ${params.name}`, true);
  }
}

/** @param {string} value @param {boolean} [isError] */
function text(value, isError = false) {
  return { content: [{ type: 'text', text: value }], isError };
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
