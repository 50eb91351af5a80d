/** A Redis call did not answer in time; its command may still run later. */
export class RedisTimeoutError extends Error {
  constructor(what: string, timeoutMs: number) {
    super(`${what} did not answer within ${timeoutMs} ms`);
    this.name = 'RedisTimeoutError';
  }
}

/**
 * Races a promise against a timer (a deadline already past is 0 ms). A call failing after
 * the time is up is not left unhandled: the race holds a handler on it.
 */
export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  const ms = Math.max(0, timeoutMs);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RedisTimeoutError(what, ms)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
