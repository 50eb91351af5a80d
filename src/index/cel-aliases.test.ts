import { describe, expect, it } from 'vitest';
import { rewriteAliases } from './cel-aliases.js';

describe('rewriteAliases', () => {
  it.each([
    ['a and b', 'a &&  b'],
    ['a or b', 'a || b'],
    ['not a', '!   a'],
    ['(a)and(b)', '(a)&& (b)'],
    ['not(a or b)', '!  (a || b)'],
    ["parameters.mode == 'read and write'", "parameters.mode == 'read and write'"],
    ['parameters.mode == "a or b" or x', 'parameters.mode == "a or b" || x'],
    ["'''not\nand''' and x", "'''not\nand''' &&  x"],
    ["r'\\' and x", "r'\\' &&  x"],
    ["rb'\\' and x", "rb'\\' &&  x"],
    ["Br'\\' and x", "Br'\\' &&  x"],
    ["'it\\'s and' or y", "'it\\'s and' || y"],
    ['parameters.and == 1', 'parameters.and == 1'],
    ['parameters . or == 1', 'parameters . or == 1'],
    ['android == brand or notable', 'android == brand || notable'],
    ['a // and not b\nand c', 'a // and not b\n&&  c'],
    ["a //'\nand b", "a //'\n&&  b"],
    ['a and b // not c', 'a &&  b // not c'],
    ['a && b || !c', 'a && b || !c'],
  ])('%j -> %j', (input, expected) => {
    expect(rewriteAliases(input)).toBe(expected);
  });

  it('keeps the length of the source so error columns stay meaningful', () => {
    const source = 'not x and y or z';
    expect(rewriteAliases(source)).toHaveLength(source.length);
  });
});
