import { describe, expect, it } from 'vitest';
import { mcpOptions } from './mcp-options.js';

describe('--mcp-server and --mcp-timeout', () => {
  it('name upstreams, with a 30 s bound by default', () => {
    expect(mcpOptions({})).toBeUndefined();
    const options = mcpOptions({
      'mcp-server': ['notes=http://127.0.0.1:3001/mcp', 'git-hub=https://mcp.example.com/x=y'],
    });
    expect(options?.timeoutMs).toBe(30_000);
    expect(options?.upstreams.map((u) => [u.name, u.url.href])).toEqual([
      ['notes', 'http://127.0.0.1:3001/mcp'],
      ['git-hub', 'https://mcp.example.com/x=y'],
    ]);
    expect(mcpOptions({ 'mcp-server': ['a=http://h/'], 'mcp-timeout': '2.5' })?.timeoutMs).toBe(2500);
  });

  it.each([
    [{ 'mcp-timeout': '5' }, '--mcp-timeout needs --mcp-server NAME=URL'],
    [
      { 'mcp-server': ['http://h/mcp'] },
      '--mcp-server: "http://h/mcp" does not start with a NAME of [a-z][a-z0-9_-]* and "="',
    ],
    [
      { 'mcp-server': ['Notes=http://h/'] },
      '--mcp-server: "Notes=http://h/" does not start with a NAME of [a-z][a-z0-9_-]* and "="',
    ],
    [
      { 'mcp-server': ['a.b=http://h/'] },
      '--mcp-server: "a.b=http://h/" does not start with a NAME of [a-z][a-z0-9_-]* and "="',
    ],
    [{ 'mcp-server': ['notes=ftp://h/'] }, '--mcp-server: "ftp://h/" is not an http(s) URL'],
    [{ 'mcp-server': ['notes=http://a/', 'notes=http://b/'] }, '--mcp-server: notes is given twice'],
    [
      { 'mcp-server': ['a=http://h/'], 'mcp-timeout': '0' },
      '--mcp-timeout: 0 is not a number of seconds in (0, 3600]',
    ],
    [
      { 'mcp-server': ['a=http://h/'], 'mcp-timeout': 'soon' },
      '--mcp-timeout: soon is not a number of seconds in (0, 3600]',
    ],
  ])('refuses %j: %s', (flags, message) => {
    expect(() => mcpOptions(flags)).toThrow(expect.objectContaining({ name: 'UsageError', message }));
  });
});
