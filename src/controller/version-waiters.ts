import { ArbiterError } from '../model/index.js';

/**
 * Whether `seen` includes the write that returned `written`. resourceVersions are
 * opaque, but every API server in use derives them from etcd revisions (decimal
 * integers that only grow): compare those numerically, anything else for equality.
 */
export function includesVersion(seen: string | undefined, written: string): boolean {
  if (seen === undefined) return false;
  if (/^\d+$/.test(seen) && /^\d+$/.test(written)) return BigInt(seen) >= BigInt(written);
  return seen === written;
}

/** What this replica's index holds: kind/name -> resourceVersion, after each rebuild. */
export type ProcessedVersions = ReadonlyMap<string, string>;

interface Waiter {
  done: (versions: ProcessedVersions) => boolean;
  resolve: () => void;
  reject: (err: unknown) => void;
  timer: NodeJS.Timeout;
}

/** Read-your-writes: an API write answers once its object version reached the index. */
export class VersionWaiters {
  private readonly waiters = new Set<Waiter>();
  private versions: ProcessedVersions = new Map();

  constructor(private readonly timeoutMs: number) {}

  /** Called after every index rebuild with what it contains. */
  processed(versions: ProcessedVersions): void {
    this.versions = versions;
    for (const waiter of this.waiters) if (waiter.done(versions)) this.settle(waiter);
  }

  /** Resolves once `key` is in the index at `resourceVersion` or later. */
  untilVersion(key: string, resourceVersion: string): Promise<void> {
    return this.wait((v) => includesVersion(v.get(key), resourceVersion), `${key}@${resourceVersion}`);
  }

  /** Resolves once `key` has left the index. */
  untilGone(key: string): Promise<void> {
    return this.wait((v) => !v.has(key), `${key} deleted`);
  }

  rejectAll(err: unknown): void {
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      this.waiters.delete(waiter);
      waiter.reject(err);
    }
  }

  private wait(done: (versions: ProcessedVersions) => boolean, what: string): Promise<void> {
    if (done(this.versions)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        done,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          reject(
            new ArbiterError(
              'UNAVAILABLE',
              `the change (${what}) was stored in Kubernetes but has not reached this replica within ` +
                `${this.timeoutMs} ms; it will apply once the watch delivers it`,
            ),
          );
        }, this.timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  private settle(waiter: Waiter): void {
    clearTimeout(waiter.timer);
    this.waiters.delete(waiter);
    waiter.resolve();
  }
}
