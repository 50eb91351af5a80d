import { createHmac, randomBytes } from 'node:crypto';
import { canonicalJson } from '../audit/chain.js';
import { maskSensitive, type IndexSnapshot, type SensitiveFields } from '../index/index.js';
import type { EngineDecision, Proposal } from '../model/index.js';

/** What stands in the log for a sensitive value: `{"masked": "hmac-sha256:<hex>"}`. */
export interface MaskedValue {
  masked: string;
}

/** Shortest sensitive value searched for in messages. */
const MIN_SCRUBBED_CHARS = 4;

/** Shortest mask key accepted: 128 bits. */
export const MIN_MASK_KEY_BYTES = 16;

/**
 * Keeps sensitive parameter values (x-arbiter-sensitive in a capability's schema) out of
 * everything stored or shown. Each is replaced by the HMAC-SHA256, under a secret key, of
 * its canonical JSON: equal values give equal masks, so they can still be correlated, and
 * without the key nothing can be recovered or guessed. Decisions are made on the real
 * values; only what is recorded is masked.
 */
export class ParameterMasker {
  private warned = false;

  constructor(
    private readonly key: Buffer,
    private readonly index: { current(): IndexSnapshot },
    /** Told once, on the first value masked with a key made for this process only. */
    private readonly onEphemeralKey?: () => void,
    private readonly ephemeral = false,
  ) {
    if (key.length < MIN_MASK_KEY_BYTES)
      throw new Error(`the mask key has ${key.length} bytes; it needs at least ${MIN_MASK_KEY_BYTES}`);
  }

  /** Without --audit-mask-key: masks still hide the values, but only this process can correlate them. */
  static withEphemeralKey(index: { current(): IndexSnapshot }, onFirstUse?: () => void): ParameterMasker {
    return new ParameterMasker(randomBytes(32), index, onFirstUse, true);
  }

  /** The proposal as it may be recorded: itself when its capability marks nothing sensitive. */
  maskProposal(proposal: Proposal): Proposal {
    const sensitive = this.sensitiveOf(proposal);
    if (!sensitive) return proposal;
    const parameters = maskSensitive(proposal.action.parameters, sensitive, (value) => this.maskValue(value));
    if (parameters === proposal.action.parameters) return proposal;
    return { ...proposal, action: { ...proposal.action, parameters: parameters as Record<string, unknown> } };
  }

  /**
   * The decision with any sensitive value of the proposal that a message quotes (a
   * condition's error, a reason) replaced by [masked]. Values shorter than
   * MIN_SCRUBBED_CHARS are left, so that "rule 1" is not mangled by a secret "1".
   */
  scrubDecision(proposal: Proposal, decided: EngineDecision): EngineDecision {
    // Most capabilities mark nothing sensitive: then there is nothing to look for.
    const sensitive = this.sensitiveOf(proposal);
    if (!sensitive) return decided;
    const { reason, evaluation, warnings } = decided;
    const text = JSON.stringify({ reason, evaluation, warnings });
    const scrubbed = replaceSecrets(proposal, sensitive, text, (secret) =>
      JSON.stringify(secret).slice(1, -1),
    );
    return scrubbed === text
      ? decided
      : { ...decided, ...(JSON.parse(scrubbed) as Pick<EngineDecision, 'reason' | 'evaluation'>) };
  }

  /** A text about the proposal (a tool's result summary) with its sensitive values replaced. */
  scrubText(proposal: Proposal, text: string): string {
    const sensitive = this.sensitiveOf(proposal);
    return sensitive ? replaceSecrets(proposal, sensitive, text, (secret) => secret) : text;
  }

  private sensitiveOf(proposal: Proposal): SensitiveFields | undefined {
    return this.index.current().capability(proposal.action.capability)?.sensitive;
  }

  maskValue(value: unknown): MaskedValue {
    if (this.ephemeral && !this.warned) {
      this.warned = true;
      this.onEphemeralKey?.();
    }
    return { masked: `hmac-sha256:${this.hmac(canonicalJson(value))}` };
  }

  /**
   * A fingerprint of a request (for an approved retry) as the log may keep it: keyed when
   * the capability has sensitive parameters, so that a hash over a secret cannot be
   * checked against guesses of it; as it is otherwise.
   */
  recordedFingerprint(fingerprint: string, capability: string): string {
    if (!this.index.current().capability(capability)?.sensitive) return fingerprint;
    return this.hmac(`fingerprint:${fingerprint}`);
  }

  private hmac(text: string): string {
    return createHmac('sha256', this.key).update(text, 'utf8').digest('hex');
  }
}

/** `text` with each sensitive value of the proposal, written as `written` says, replaced by [masked]. */
function replaceSecrets(
  proposal: Proposal,
  sensitive: SensitiveFields,
  text: string,
  written: (secret: string) => string,
): string {
  const secrets = new Set<string>();
  maskSensitive(proposal.action.parameters, sensitive, (value) => {
    collectScalars(value, secrets);
    return value;
  });
  let result = text;
  for (const secret of secrets)
    if (secret.length >= MIN_SCRUBBED_CHARS) result = result.replaceAll(written(secret), '[masked]');
  return result;
}

/** Every string and number inside a value, as text. */
function collectScalars(value: unknown, into: Set<string>): void {
  if (typeof value === 'string') into.add(value);
  else if (typeof value === 'number' || typeof value === 'bigint') into.add(String(value));
  else if (typeof value === 'object' && value !== null)
    for (const member of Object.values(value)) collectScalars(member, into);
}
