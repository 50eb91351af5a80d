import type { AuditEntry } from '../audit/audit-log.js';
import { completeDecision, evaluateProposal, resolveEngineSettings } from '../engine/index.js';
import type { DecisionData } from '../governance/decision-record.js';
import type { IndexSnapshot } from '../index/index.js';
import { OUTCOME_RESTRICTIVENESS, type Outcome } from '../model/index.js';

/** Decision ids listed per transition. */
const LISTED_IDS = 5;

export interface Transition {
  from: Outcome;
  to: Outcome;
  count: number;
  /** Up to five decision ids. */
  decisionIds: string[];
  /** The new outcome is less restrictive (DENY > ESCALATE > REQUIRE_CONFIRMATION > ALLOW). */
  loosens: boolean;
}

export interface ReplayReport {
  replayed: number;
  unchanged: number;
  transitions: Transition[];
  /** Not replayed: their recorded outcome depended on state the export does not replay. */
  apart: { rateLimited: number; reviewed: number };
}

/**
 * Re-decides recorded governance decisions under another configuration, at their recorded
 * time and risk threshold, with the engine the server uses. What a decision needs is in
 * its entry: the full request (data.request), the time and the evaluation's threshold.
 * Decisions whose outcome came from a rate-limit counter or a review (a confirmation token,
 * an approved Kubernetes request) are counted apart: that state is not replayed.
 */
export class DecisionReplay {
  private replayed = 0;
  private unchanged = 0;
  private readonly transitions = new Map<string, Transition>();
  private readonly apart = { rateLimited: 0, reviewed: 0 };

  constructor(
    private readonly snapshot: IndexSnapshot,
    private readonly defaultOutcome: 'ALLOW' | 'DENY',
  ) {}

  add(entry: AuditEntry): void {
    if (entry.event_type !== 'governance.decision' || entry.outcome === null) return;
    const data = entry.data as unknown as DecisionData;
    if (data.confirmation_of !== undefined) {
      this.apart.reviewed += 1;
      return;
    }
    if (dependedOnRateLimit(data)) {
      this.apart.rateLimited += 1;
      return;
    }
    const settings = resolveEngineSettings({
      riskThreshold: data.evaluation.risk_threshold,
      defaultOutcome: this.defaultOutcome,
    });
    const now = new Date(data.decision.timestamp ?? entry.timestamp);
    const decided = completeDecision(evaluateProposal(this.snapshot, data.request, now, settings), true);
    this.replayed += 1;
    if (decided.outcome === entry.outcome) {
      this.unchanged += 1;
      return;
    }
    this.note(entry.outcome, decided.outcome, entry.decision_id ?? entry.id);
  }

  report(): ReplayReport {
    const transitions = [...this.transitions.values()].sort(
      (a, b) => b.count - a.count || key(a).localeCompare(key(b)),
    );
    return { replayed: this.replayed, unchanged: this.unchanged, transitions, apart: { ...this.apart } };
  }

  private note(from: Outcome, to: Outcome, decisionId: string): void {
    const id = `${from} -> ${to}`;
    const transition = this.transitions.get(id) ?? {
      from,
      to,
      count: 0,
      decisionIds: [],
      loosens: rank(to) > rank(from),
    };
    transition.count += 1;
    if (transition.decisionIds.length < LISTED_IDS) transition.decisionIds.push(decisionId);
    this.transitions.set(id, transition);
  }
}

/** Over the limit then, or allowed under a limited grant: the counter decided or could have. */
function dependedOnRateLimit(data: DecisionData): boolean {
  return (
    data.evaluation.authority_check === 'rate_limited' || data.decision.constraints?.rate_limit !== undefined
  );
}

function rank(outcome: Outcome): number {
  return OUTCOME_RESTRICTIVENESS.indexOf(outcome);
}

function key(t: Transition): string {
  return `${t.from} -> ${t.to}`;
}
