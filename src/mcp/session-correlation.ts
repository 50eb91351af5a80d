/**
 * The `_meta` key under which a stateless (2026-07-28) tools/call may name the
 * conversation it belongs to. The revision has no session; Arbiter records this value as
 * the proposal's `context.session_id` (and the decision's `mcp.session_id`), so that the
 * calls of one agent run can be found together and policies can read it.
 */
export const SESSION_META = 'dev.arbiter/session_id';

/** Longest correlation id, as `context.session_id` of a proposal. */
const MAX_CHARS = 256;

/** The correlation a call's `_meta` names; undefined when none; an Error when it is not a usable one. */
export function sessionCorrelation(meta: Record<string, unknown> | undefined): string | undefined | Error {
  const value = meta?.[SESSION_META];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_CHARS)
    return new Error(`_meta["${SESSION_META}"] must be a string of 1 to ${MAX_CHARS} characters`);
  return value;
}
