import { describe, expect, it } from 'vitest';
import { RESULT_SUMMARY_MAX_CHARS, summariseToolResult } from './result-summary.js';

describe('the summary of a tool result', () => {
  it('is its text, with a label for what is not text', () => {
    expect(
      summariseToolResult({
        content: [
          { type: 'text', text: '3 rows' },
          { type: 'image', mimeType: 'image/png' },
          { type: 'resource_link', uri: 'file:///tmp/a' },
          { type: 'audio' },
        ],
      }),
    ).toBe('3 rows\n[image image/png]\n[resource_link file:///tmp/a]\n[audio]');
  });

  it('falls back to the structured content when there is no content', () => {
    expect(summariseToolResult({ structuredContent: { rows: 3 } })).toBe('{"rows":3}');
    expect(summariseToolResult({})).toBe('');
  });

  it('is cut to a bound, in characters, saying how much was left out', () => {
    const long = 'é'.repeat(RESULT_SUMMARY_MAX_CHARS + 10);
    const summary = summariseToolResult({ content: [{ type: 'text', text: long }] });
    expect(summary).toBe(`${'é'.repeat(RESULT_SUMMARY_MAX_CHARS)}… (10 more characters)`);
    const exact = 'a'.repeat(RESULT_SUMMARY_MAX_CHARS);
    expect(summariseToolResult({ content: [{ type: 'text', text: exact }] })).toBe(exact);
  });
});
