/**
 * Uses that may happen once across every replica: the use of an approval (an approved
 * admission or MCP retry, a confirmation token). Whoever claims a key first has it; every
 * later claim of that key is refused until `until` has passed, or until the claim is
 * released. A store that cannot answer rejects (ArbiterError UNAVAILABLE): a use is never
 * allowed without its claim.
 */
export interface OneTimeUses {
  /** True for the one caller that claims `key` first; false for every other until `until`. */
  claim(key: string, until: Date): Promise<boolean>;
  /** Gives up a claim whose use did not happen, so that the key may be claimed again. */
  release(key: string): Promise<void>;
  close(): Promise<void>;
}
