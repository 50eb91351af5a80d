/**
 * A minimal Arbiter client for an agent: propose before acting, fail closed.
 *
 * Only an HTTP 200 with a well-formed decision counts. Anything else (a 4xx or 5xx, a
 * timeout, a network error, a body that is not a decision) is treated as DENY, so an
 * agent never acts because governance was unreachable.
 */

export type Outcome = 'ALLOW' | 'DENY' | 'ESCALATE' | 'REQUIRE_CONFIRMATION';

export interface Decision {
  outcome: Outcome;
  reason: string;
  /** Null when Arbiter did not decide (the client denied on its own). */
  decisionId: string | null;
  riskScore: number | null;
  /** The HTTP status, or null when no response arrived. */
  httpStatus: number | null;
}

export interface Actor {
  id: string;
  type: 'ai-agent' | 'ai-copilot' | 'automation' | 'human';
}

export interface ArbiterClientOptions {
  /** e.g. http://arbiter.arbiter-system.svc:8080 */
  baseUrl: string;
  apiKey: string;
  actor: Actor;
  /** Bound on one call; past it the answer is DENY. Default 5000. */
  timeoutMs?: number;
}

const OUTCOMES: readonly string[] = ['ALLOW', 'DENY', 'ESCALATE', 'REQUIRE_CONFIRMATION'];

export class ArbiterClient {
  private readonly timeoutMs: number;

  constructor(private readonly options: ArbiterClientOptions) {
    this.timeoutMs = options.timeoutMs ?? 5000;
  }

  /** Asks Arbiter whether the action may run. Never throws: failures are DENY. */
  async propose(
    capability: string,
    parameters: Record<string, unknown>,
    context: Record<string, unknown> = {},
  ): Promise<Decision> {
    let response: Response;
    try {
      response = await this.post('/api/v1/governance/propose', {
        actor: this.options.actor,
        action: { capability, parameters },
        context,
      });
    } catch (err) {
      return denied(`Arbiter unreachable: ${(err as Error).message}`, null);
    }
    if (response.status !== 200) {
      return denied(
        `Arbiter answered HTTP ${response.status}: ${await errorMessage(response)}`,
        response.status,
      );
    }
    const body = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    if (!body || typeof body.outcome !== 'string' || !OUTCOMES.includes(body.outcome)) {
      return denied('Arbiter answered 200 without a decision', 200);
    }
    return {
      outcome: body.outcome as Outcome,
      reason: typeof body.reason === 'string' ? body.reason : '',
      decisionId: typeof body.decision_id === 'string' ? body.decision_id : null,
      riskScore: typeof body.risk_score === 'number' ? body.risk_score : null,
      httpStatus: 200,
    };
  }

  /** Reports how an allowed action went (best effort: the action already happened). */
  async reportExecution(
    decisionId: string,
    report: { status: 'completed' | 'failed'; resultSummary: string; durationMs: number },
  ): Promise<boolean> {
    try {
      const response = await this.post(
        `/api/v1/governance/decisions/${encodeURIComponent(decisionId)}/execution`,
        {
          status: report.status,
          result_summary: report.resultSummary,
          duration_ms: Math.round(report.durationMs),
        },
      );
      return response.status === 201;
    } catch {
      return false;
    }
  }

  private post(path: string, body: unknown): Promise<Response> {
    return fetch(new URL(path, this.options.baseUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${this.options.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
  }
}

function denied(reason: string, httpStatus: number | null): Decision {
  return { outcome: 'DENY', reason, decisionId: null, riskScore: null, httpStatus };
}

async function errorMessage(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    const parsed = JSON.parse(text) as { error?: { code?: string; message?: string } };
    return `${parsed.error?.code ?? ''} ${parsed.error?.message ?? ''}`.trim() || text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}
