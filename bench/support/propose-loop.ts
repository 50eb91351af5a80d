import { setTimeout as sleep } from 'node:timers/promises';

/** One answer of the loop; times are performance.now() of this process, in ms. */
export interface LoopAnswer {
  status: number;
  outcome: string | undefined;
  sentAt: number;
  answeredAt: number;
}

export interface ProposeLoop {
  readonly answers: LoopAnswer[];
  stop(): Promise<void>;
}

/**
 * Proposes from `clients` concurrent clients, each pausing `pauseMs` between its requests,
 * until stopped. A refused connection is an answer with status 0 (Arbiter down is
 * a finding, not a crash of the benchmark).
 */
export function proposeLoop(options: {
  url: string;
  headers: Record<string, string>;
  bodies: readonly string[];
  clients: number;
  pauseMs: number;
}): ProposeLoop {
  const answers: LoopAnswer[] = [];
  let running = true;
  const client = async (c: number) => {
    for (let i = c; running; i += options.clients) {
      const sentAt = performance.now();
      const { status, outcome } = await propose(
        options.url,
        options.headers,
        options.bodies[i % options.bodies.length]!,
      );
      answers.push({ status, outcome, sentAt, answeredAt: performance.now() });
      await sleep(options.pauseMs);
    }
  };
  const done = Promise.all(Array.from({ length: options.clients }, (_, c) => client(c)));
  return {
    answers,
    async stop() {
      running = false;
      await done;
    },
  };
}

/** One POST /api/v1/governance/propose: its status and outcome (status 0: no answer). */
export async function propose(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; outcome: string | undefined }> {
  try {
    const res = await fetch(`${url}/api/v1/governance/propose`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    const json = (await res.json()) as { outcome?: unknown };
    return { status: res.status, outcome: typeof json.outcome === 'string' ? json.outcome : undefined };
  } catch {
    return { status: 0, outcome: undefined };
  }
}
