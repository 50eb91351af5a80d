import { describe, expect, it } from 'vitest';
import { sealEntry, storedText } from './chain.js';
import { parseEntryLine } from './entry-shape.js';
import { event } from './file/test-fixtures.js';

describe('parseEntryLine', () => {
  it('reads an entry in its stored form', () => {
    const entry = sealEntry({ id: 'aud-1', ...event() }, null);
    expect(parseEntryLine(storedText(entry))).toEqual({ kind: 'entry', entry });
  });

  const fields = '"id":"aud-1","hash":"sha256:1","previous_hash":"sha256:0","timestamp":"t","event_type":"e"';
  it.each([
    ['null', 'not a JSON object'],
    ['5', 'not a JSON object'],
    ['"text"', 'not a JSON object'],
    ['[{"seq":1}]', 'not a JSON object'],
    [`{${fields}}`, 'seq is not a positive integer'],
    [`{"seq":0,${fields}}`, 'seq is not a positive integer'],
    [`{"seq":1.5,${fields}}`, 'seq is not a positive integer'],
    [`{"seq":"1",${fields}}`, 'seq is not a positive integer'],
    ['{"seq":1}', 'id is not a string'],
    ['{"seq":1,"id":7}', 'id is not a string'],
    ['{"seq":1,"id":"a"}', 'hash is not a string'],
    ['{"seq":1,"id":"a","hash":"h"}', 'previous_hash is not a string'],
    ['{"seq":1,"id":"a","hash":"h","previous_hash":"p"}', 'timestamp is not a string'],
    ['{"seq":1,"id":"a","hash":"h","previous_hash":"p","timestamp":null}', 'timestamp is not a string'],
    ['{"seq":1,"id":"a","hash":"h","previous_hash":"p","timestamp":"t"}', 'event_type is not a string'],
  ])('refuses %s: %s', (text, reason) => {
    expect(parseEntryLine(text)).toEqual({ kind: 'invalid', reason });
  });

  it('names what JSON.parse found wrong in a line that is not JSON', () => {
    const parsed = parseEntryLine('{"seq":');
    expect(parsed.kind).toBe('invalid');
    expect(parsed.kind === 'invalid' && parsed.reason).toMatch(/^not valid JSON \(.+\)$/);
  });
});
