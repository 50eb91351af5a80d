import type { ArbiterClient, Decision } from './arbiter-client.js';

export type GovernedResult<T> =
  { executed: true; decision: Decision; result: T } | { executed: false; decision: Decision };

/**
 * Runs `action` only if Arbiter answers ALLOW for (capability, parameters), then reports
 * the execution. ESCALATE and REQUIRE_CONFIRMATION are pending on a human: the action
 * does not run now (the decision id lets the caller follow up). DENY, and every failure
 * to get a decision, never runs it.
 */
export async function governed<T>(
  client: ArbiterClient,
  capability: string,
  parameters: Record<string, unknown>,
  action: () => Promise<T>,
): Promise<GovernedResult<T>> {
  const decision = await client.propose(capability, parameters);
  if (decision.outcome !== 'ALLOW') return { executed: false, decision };
  const started = performance.now();
  try {
    const result = await action();
    if (decision.decisionId) {
      await client.reportExecution(decision.decisionId, {
        status: 'completed',
        resultSummary: `${capability} completed`,
        durationMs: performance.now() - started,
      });
    }
    return { executed: true, decision, result };
  } catch (err) {
    if (decision.decisionId) {
      await client.reportExecution(decision.decisionId, {
        status: 'failed',
        resultSummary: (err as Error).message.slice(0, 500),
        durationMs: performance.now() - started,
      });
    }
    throw err;
  }
}
