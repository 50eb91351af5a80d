import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { errorText } from './error-text.js';

describe('errorText', () => {
  it('says which file a file system error is about, without the code and system call', async () => {
    const err = await readFile('/nonexistent/audit.jsonl').catch((e: unknown) => e);
    expect(errorText(err)).toBe('/nonexistent/audit.jsonl: no such file or directory');
  });

  it('says which address a listen failed on', async () => {
    const held = createServer();
    await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
    const { port } = held.address() as { port: number };
    const second = createServer();
    const err = await new Promise((resolve) => {
      second.once('error', resolve);
      second.listen(port, '127.0.0.1');
    });
    await new Promise((resolve) => held.close(resolve));
    expect(errorText(err)).toBe(`cannot listen on 127.0.0.1:${port}: address already in use`);
  });

  it('keeps the first line of any other message, and reads what is not an Error', () => {
    expect(errorText(new Error('bad key\n  at line 3'))).toBe('bad key');
    expect(errorText(new TypeError(''))).toBe('TypeError');
    expect(errorText('plain words')).toBe('plain words');
    expect(errorText(Object.assign(new Error('odd'), { errno: 1e9, syscall: 'open' }))).toBe('odd');
  });
});
