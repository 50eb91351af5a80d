import type { CallToolResult, Tool } from '@modelcontextprotocol/server';

export declare const NOTES_TOOLS: Tool[];

/** What the notes server keeps: the notes, and every tools/call it received, in order. */
export interface NotesState {
  notes: Map<string, string>;
  calls: Array<{ tool: string; arguments: Record<string, unknown> }>;
}

export interface NotesServer extends NotesState {
  url: string;
  port: number;
  close(): Promise<void>;
}

export declare function startNotesServer(options?: { port?: number; host?: string }): Promise<NotesServer>;

export declare function callNotesTool(
  state: NotesState,
  params: { name: string; arguments?: Record<string, unknown> },
): CallToolResult;
