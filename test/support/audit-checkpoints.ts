import { call, KEYS } from './arbiter-process.js';

/** Waits until the server at `url` has taken a checkpoint at or after `seq`. */
export async function checkpointedUpTo(url: string, seq: number): Promise<void> {
  for (let i = 0; i < 600; i += 1) {
    const { body } = await call(url, 'GET', '/api/v1/audit/checkpoints', { key: KEYS.auditor });
    // Newest first.
    if (((body as { checkpoints: { seq: number }[] }).checkpoints[0]?.seq ?? 0) >= seq) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no checkpoint at seq ${seq}`);
}
