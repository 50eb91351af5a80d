/** Longest result summary recorded in an execution entry, in characters. */
export const RESULT_SUMMARY_MAX_CHARS = 500;

/** The parts of an MCP CallToolResult a summary reads. */
export interface ToolResultContent {
  content?: ReadonlyArray<{ type: string; text?: unknown; mimeType?: unknown; uri?: unknown }>;
  structuredContent?: unknown;
  isError?: boolean;
}

/**
 * What the execution entry says the tool returned: its text, and a short label for
 * anything else (images, audio, resources), cut to RESULT_SUMMARY_MAX_CHARS. Bounded so
 * that a tool returning megabytes cannot grow the audit log by as much.
 */
export function summariseToolResult(result: ToolResultContent): string {
  const parts = (result.content ?? []).map(describeContent);
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  return bounded(parts.join('\n'));
}

export function bounded(text: string): string {
  const chars = [...text];
  if (chars.length <= RESULT_SUMMARY_MAX_CHARS) return text;
  const omitted = chars.length - RESULT_SUMMARY_MAX_CHARS;
  return `${chars.slice(0, RESULT_SUMMARY_MAX_CHARS).join('')}… (${omitted} more characters)`;
}

function describeContent(item: { type: string; text?: unknown; mimeType?: unknown; uri?: unknown }): string {
  if (item.type === 'text' && typeof item.text === 'string') return item.text;
  const detail =
    typeof item.mimeType === 'string' ? item.mimeType : typeof item.uri === 'string' ? item.uri : '';
  return detail ? `[${item.type} ${detail}]` : `[${item.type}]`;
}
