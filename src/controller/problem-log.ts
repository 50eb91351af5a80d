import type { Logger } from 'pino';

/**
 * Logs a lasting problem of a polling loop once, not at every poll: again only when its
 * message changes, or when it comes back after it was resolved. Topics keep unrelated
 * problems (reading, writing) from resetting each other.
 */
export class ProblemLog {
  private readonly last = new Map<string, string>();

  constructor(
    private readonly logger: Logger,
    private readonly fields: Record<string, unknown> = {},
  ) {}

  report(topic: string, level: 'warn' | 'error', message: string, err?: unknown): void {
    const key = `${message}\n${err instanceof Error ? err.message : typeof err === 'string' ? err : ''}`;
    if (this.last.get(topic) === key) return;
    this.last.set(topic, key);
    this.logger[level]({ ...this.fields, ...(err === undefined ? {} : { err }) }, message);
  }

  resolved(topic: string): void {
    this.last.delete(topic);
  }
}
