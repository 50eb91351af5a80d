import type { Logger } from 'pino';
import type { ServingPair } from '../admission/serving-certificates.js';

/**
 * The pair and CA bundle a replica serves, with the listeners to tell when they change:
 * the part both ServingCertificates implementations share.
 */
export class ServingState {
  private pair: ServingPair | undefined;
  private bundle: string | undefined;
  private readonly listeners = new Set<() => void>();
  private markLoaded: () => void = () => undefined;
  /** Resolves when the first pair is set. */
  readonly loaded: Promise<void> = new Promise((resolve) => (this.markLoaded = resolve));

  constructor(private readonly logger: Logger) {}

  current(): ServingPair | undefined {
    return this.pair;
  }

  caBundle(): string | undefined {
    return this.bundle;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Swaps in a pair and bundle; returns whether anything changed (listeners were told). */
  set(pair: ServingPair, bundle: string | undefined): boolean {
    const same =
      this.pair?.certPem === pair.certPem && this.pair.keyPem === pair.keyPem && this.bundle === bundle;
    if (same) return false;
    this.pair = { certPem: pair.certPem, keyPem: pair.keyPem };
    this.bundle = bundle;
    this.markLoaded();
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch (err) {
        // One failing listener must not keep the others on the old certificate.
        this.logger.error({ err }, 'a serving certificate listener failed');
      }
    }
    return true;
  }

  /** Waits for the first pair at most `timeoutMs`; returns whether one is loaded. */
  async waitLoaded(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([this.loaded.then(() => true), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}
