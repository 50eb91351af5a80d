import type { Tool } from '@modelcontextprotocol/sdk/types.js';

export declare const NOTES_TOOLS: Tool[];

export interface NotesServer {
  url: string;
  port: number;
  /** Every tools/call the server accepted, in order, with its receipt if it had one. */
  calls: Array<{ tool: string; arguments: Record<string, unknown>; receipt?: unknown }>;
  notes: Map<string, string>;
  close(): Promise<void>;
}

export declare function startNotesServer(options?: {
  port?: number;
  host?: string;
  /** Arbiter's verifier key: only calls with a receipt of it that holds are accepted. */
  receiptVkey?: string;
}): Promise<NotesServer>;
