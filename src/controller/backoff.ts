/** Exponential backoff with jitter, so many replicas do not retry in lockstep. */
export interface BackoffSettings {
  initialDelayMs: number;
  maxDelayMs: number;
  factor: number;
  /** 0..1: the share of each delay that is randomised. */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffSettings = {
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  factor: 2,
  jitter: 0.5,
};

export class Backoff {
  private attempt = 0;

  constructor(
    private readonly settings: BackoffSettings = DEFAULT_BACKOFF,
    private readonly random: () => number = Math.random,
  ) {}

  /** The delay before the next attempt; grows until reset(). */
  nextDelayMs(): number {
    const { initialDelayMs, maxDelayMs, factor, jitter } = this.settings;
    const base = Math.min(maxDelayMs, initialDelayMs * factor ** this.attempt);
    this.attempt += 1;
    return Math.round(base * (1 - jitter + jitter * this.random()));
  }

  reset(): void {
    this.attempt = 0;
  }
}
