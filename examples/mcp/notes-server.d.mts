import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { ReceiptVerifierKey } from './receipt-check.mjs';

export declare const NOTES_TOOLS: Tool[];

/** What the notes server keeps: the notes, and every tools/call it accepted, in order. */
export interface NotesState {
  notes: Map<string, string>;
  /** Every tools/call the server accepted, in order, with its receipt if it had one. */
  calls: Array<{ tool: string; arguments: Record<string, unknown>; receipt?: unknown }>;
  /** Arbiter's verifier key: only calls with a receipt of it that holds are accepted. */
  receiptKey?: ReceiptVerifierKey;
}

export interface NotesServer extends Omit<NotesState, 'receiptKey'> {
  url: string;
  port: number;
  close(): Promise<void>;
}

export declare function startNotesServer(options?: {
  port?: number;
  host?: string;
  /** Arbiter's verifier key (vkey text): only calls with a receipt of it that holds are accepted. */
  receiptVkey?: string;
}): Promise<NotesServer>;

export declare function callNotesTool(
  state: NotesState,
  params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
): CallToolResult;
