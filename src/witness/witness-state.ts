import { readFile } from 'node:fs/promises';
import { writeFileAtomically } from '../fs/atomic-file.js';
import type { WitnessedCheckpoint } from './add-checkpoint.js';

interface StateDocument {
  logs: Record<string, { size: number; root: string }>;
}

/**
 * The latest cosigned checkpoint per origin, in one JSON file (owner-only) replaced
 * atomically. Updates run one at a time: the check of the old size and the write of the
 * new state happen under the same turn, so two concurrent requests can never roll the
 * state back (tlog-witness, add-checkpoint).
 */
export class WitnessState {
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly path: string,
    private logs: Map<string, WitnessedCheckpoint>,
  ) {}

  static async open(path: string): Promise<WitnessState> {
    let document: StateDocument = { logs: {} };
    try {
      document = JSON.parse(await readFile(path, 'utf8')) as StateDocument;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const logs = new Map(
      Object.entries(document.logs ?? {}).map(([origin, c]) => [
        origin,
        { size: c.size, root: Buffer.from(c.root, 'base64') },
      ]),
    );
    return new WitnessState(path, logs);
  }

  latest(origin: string): WitnessedCheckpoint | undefined {
    return this.logs.get(origin);
  }

  /**
   * Runs `decide` with the origin's latest checkpoint and, when it returns a new one,
   * persists it before resolving; nothing else reads or writes the state meanwhile.
   */
  update<T>(
    origin: string,
    decide: (latest: WitnessedCheckpoint | undefined) => { next?: WitnessedCheckpoint; result: T },
  ): Promise<T> {
    const run = this.queue.then(async () => {
      const { next, result } = decide(this.logs.get(origin));
      if (next) {
        const logs = new Map(this.logs).set(origin, next);
        await this.persist(logs);
        this.logs = logs;
      }
      return result;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async persist(logs: Map<string, WitnessedCheckpoint>): Promise<void> {
    const document: StateDocument = {
      logs: Object.fromEntries(
        [...logs].map(([origin, c]) => [origin, { size: c.size, root: c.root.toString('base64') }]),
      ),
    };
    await writeFileAtomically(this.path, `${JSON.stringify(document, null, 2)}\n`, 0o600);
  }
}
