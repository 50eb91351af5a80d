/**
 * semantics.md accepts `and`, `or` and `not` as aliases of `&&`, `||` and `!`. They are
 * rewritten as tokens: never inside string literals or comments, never as a field name
 * (`parameters.and`), never as part of a longer identifier (`android`). Replacements keep
 * the token's width so parser error columns still point into the author's text.
 * `x not in y` is not an alias form (it becomes `x ! in y`, a parse error).
 */
const ALIASES: Readonly<Record<string, string>> = { and: '&& ', or: '||', not: '!  ' };

const IDENTIFIER = /[_a-zA-Z][_a-zA-Z0-9]*/y;
const STRING_START = /(?:[rR][bB]?|[bB][rR]?)?('''|"""|'|")/y;

export function rewriteAliases(source: string): string {
  let out = '';
  let i = 0;
  while (i < source.length) {
    const literal = stringLiteralEnd(source, i);
    if (literal > i) {
      out += source.slice(i, literal);
      i = literal;
      continue;
    }
    if (source.startsWith('//', i)) {
      const end = source.indexOf('\n', i);
      const stop = end === -1 ? source.length : end;
      out += source.slice(i, stop);
      i = stop;
      continue;
    }
    IDENTIFIER.lastIndex = i;
    const word = IDENTIFIER.exec(source)?.[0];
    if (word) {
      const alias = ALIASES[word];
      out += alias !== undefined && !followsDot(source, i) ? alias : word;
      i += word.length;
      continue;
    }
    out += source[i];
    i += 1;
  }
  return out;
}

/** End index of a string literal starting at `start` (prefix included), or `start` if none. */
function stringLiteralEnd(source: string, start: number): number {
  STRING_START.lastIndex = start;
  const match = STRING_START.exec(source);
  if (!match) return start;
  const quote = match[1]!;
  // Stryker disable next-line MethodExpression,ArithmeticOperator: a quote holds no r, so testing it too changes nothing.
  const raw = /[rR]/.test(match[0].slice(0, match[0].length - quote.length));
  let i = start + match[0].length;
  while (i < source.length) {
    if (!raw && source[i] === '\\') {
      i += 2;
      continue;
    }
    if (source.startsWith(quote, i)) return i + quote.length;
    i += 1;
  }
  return source.length; // unterminated: left to the parser to report
}

function followsDot(source: string, index: number): boolean {
  let i = index - 1;
  while (/\s/.test(source.charAt(i))) i -= 1; // charAt(-1) is ''
  return source.charAt(i) === '.';
}
