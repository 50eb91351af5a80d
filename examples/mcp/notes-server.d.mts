import type { Tool } from '@modelcontextprotocol/sdk/types.js';

export declare const NOTES_TOOLS: Tool[];

export interface NotesServer {
  url: string;
  port: number;
  /** Every tools/call the server received, in order. */
  calls: Array<{ tool: string; arguments: Record<string, unknown> }>;
  notes: Map<string, string>;
  close(): Promise<void>;
}

export declare function startNotesServer(options?: { port?: number; host?: string }): Promise<NotesServer>;
