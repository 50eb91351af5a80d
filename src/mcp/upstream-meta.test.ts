import { describe, expect, it } from 'vitest';
import { passedOnMeta } from './upstream-meta.js';

describe('passedOnMeta', () => {
  it("keeps the upstream's own keys and leaves out the protocol's", () => {
    expect(
      passedOnMeta({
        'io.modelcontextprotocol/serverInfo': { name: 'notes', version: '1.0.0' },
        'io.modelcontextprotocol/related-task': { taskId: 't' },
        'com.example/trace': 'x',
        progressToken: 1,
      }),
    ).toEqual({ 'com.example/trace': 'x', progressToken: 1 });
    expect(passedOnMeta(undefined)).toEqual({});
  });
});
