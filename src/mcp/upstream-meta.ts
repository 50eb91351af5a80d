/** The prefix MCP reserves for the protocol's own `_meta` keys (serverInfo, protocolVersion, ...). */
const PROTOCOL_META_PREFIX = 'io.modelcontextprotocol/';

/**
 * An upstream result's `_meta` as the proxy passes it on: without the protocol's own keys,
 * which describe the upstream's side of its exchange with Arbiter (its serverInfo, say),
 * not the agent's exchange with Arbiter.
 */
export function passedOnMeta(meta: Record<string, unknown> | undefined): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(meta ?? {}).filter(([key]) => !key.startsWith(PROTOCOL_META_PREFIX)),
  );
}
