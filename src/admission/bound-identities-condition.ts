import type { MatchCondition } from './validating-webhook-configuration.js';

export const BOUND_IDENTITIES_CONDITION = 'bound-identities';

/**
 * The governance webhook's matchCondition (API servers >= 1.28): only requests of identities
 * bound to an actor reach Arbiter, so nobody else depends on it being up. With no bound
 * identity at all nothing is sent.
 */
export function boundIdentitiesCondition(usernames: readonly string[]): MatchCondition {
  const unique = [...new Set(usernames)].sort();
  const expression =
    unique.length === 0
      ? 'false'
      : `request.userInfo.username in [${unique.map(celStringLiteral).join(', ')}]`;
  return { name: BOUND_IDENTITIES_CONDITION, expression };
}

/**
 * A CEL string literal that denotes exactly `value`: quotes and backslashes escaped, control
 * characters as \u escapes. An unpaired surrogate becomes U+FFFD, as Go's JSON decoder turns
 * it into before the API server ever compares a username.
 */
export function celStringLiteral(value: string): string {
  let literal = "'";
  for (const char of value) literal += escaped(char);
  return `${literal}'`;
}

function escaped(char: string): string {
  if (char === '\\' || char === "'") return `\\${char}`;
  const code = char.codePointAt(0) ?? 0;
  if (code >= 0xd800 && code <= 0xdfff) return '\ufffd';
  if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return `\\u${code.toString(16).padStart(4, '0')}`;
  return char;
}
