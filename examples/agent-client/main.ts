/**
 * A demo agent: it wants to run a few tools and asks Arbiter first.
 *
 *   ARBITER_URL=http://localhost:8080 ARBITER_API_KEY=dev-agent-key npx tsx examples/agent-client/main.ts
 *
 * (with `npm start` running: the example manifests and keys).
 */
import { pathToFileURL } from 'node:url';
import { ArbiterClient } from './arbiter-client.js';
import { governed } from './governed.js';

export interface Step {
  capability: string;
  parameters: Record<string, unknown>;
}

/** What the agent would like to do, in order. */
export const PLAN: Step[] = [
  { capability: 'database.query', parameters: { query: 'select count(*) from orders' } },
  {
    capability: 'database.write',
    parameters: { database: 'production', statement: 'update orders set x=1' },
  },
  { capability: 'payments.transfer', parameters: { amount: 50000, currency: 'USD', to: 'acct-7' } },
  { capability: 'deploy.production', parameters: { service: 'web', version: '1.2.3' } },
];

export interface StepResult {
  capability: string;
  outcome: string;
  executed: boolean;
  reason: string;
}

export async function runAgent(
  client: ArbiterClient,
  plan: Step[],
  tools: (step: Step) => Promise<string>,
  log: (line: string) => void = console.log,
): Promise<StepResult[]> {
  const results: StepResult[] = [];
  for (const step of plan) {
    const run = await governed(client, step.capability, step.parameters, () => tools(step));
    const line = run.executed
      ? `${step.capability}: ALLOW -> ran: ${String(run.result)}`
      : `${step.capability}: ${run.decision.outcome} -> not run (${run.decision.reason})`;
    log(line);
    results.push({
      capability: step.capability,
      outcome: run.decision.outcome,
      executed: run.executed,
      reason: run.decision.reason,
    });
  }
  return results;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const client = new ArbiterClient({
    baseUrl: process.env.ARBITER_URL ?? 'http://localhost:8080',
    apiKey: process.env.ARBITER_API_KEY ?? 'dev-agent-key',
    actor: { id: process.env.ARBITER_ACTOR ?? 'agent-001', type: 'ai-agent' },
  });
  await runAgent(client, PLAN, (step) => Promise.resolve(`pretended to run ${step.capability}`));
}
