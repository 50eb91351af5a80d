import type { AuditEntry } from '../audit/audit-log.js';
import { completeDecision, evaluateProposal, resolveEngineSettings } from '../engine/index.js';
import type { DecisionData } from '../governance/decision-record.js';
import type { IndexSnapshot } from '../index/index.js';
import { OUTCOME_RESTRICTIVENESS, type Observations, type Outcome, type Tier } from '../model/index.js';

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
  /** The tier that decided the new outcome, where the actor's namespace has rules (evaluation.tier). */
  tier?: Tier;
}

export interface ReplayReport {
  replayed: number;
  unchanged: number;
  transitions: Transition[];
  /**
   * Not replayed: their recorded outcome depended on state the export does not replay, or
   * (masked) the configuration reads a parameter the log keeps masked.
   */
  apart: { rateLimited: number; reviewed: number; masked: number };
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
  private readonly apart = { rateLimited: 0, reviewed: 0, masked: 0 };

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
    const masked = maskedPaths(data.request.action.parameters);
    if (masked.length > 0 && this.readsMasked(data.request.action.capability, masked)) {
      this.apart.masked += 1;
      return;
    }
    const now = new Date(data.decision.timestamp ?? entry.timestamp);
    const decided = completeDecision(
      evaluateProposal(this.snapshot, data.request, now, settings, observationsOf(data)),
      true,
    );
    // A masked value fails the schema of the real one: that is no finding of the replay.
    if (decided.evaluation.capability_check === 'invalid_parameters' && mentionsAny(decided.reason, masked)) {
      this.apart.masked += 1;
      return;
    }
    this.replayed += 1;
    if (decided.outcome === entry.outcome) {
      this.unchanged += 1;
      return;
    }
    this.note(entry.outcome, decided.outcome, decided.evaluation.tier, entry.decision_id ?? entry.id);
  }

  report(): ReplayReport {
    const transitions = [...this.transitions.values()].sort(
      (a, b) => b.count - a.count || key(a).localeCompare(key(b)),
    );
    return { replayed: this.replayed, unchanged: this.unchanged, transitions, apart: { ...this.apart } };
  }

  /** Whether a rule of the capability has a condition that may read one of the masked fields. */
  private readsMasked(capability: string, masked: readonly string[]): boolean {
    return this.snapshot
      .rulesFor(capability)
      .some((rule) => rule.condition !== null && mentionsAny(rule.condition.source, masked));
  }

  private note(from: Outcome, to: Outcome, tier: Tier | undefined, decisionId: string): void {
    const id = key({ from, to, tier });
    const transition = this.transitions.get(id) ?? {
      from,
      to,
      count: 0,
      decisionIds: [],
      loosens: rank(to) > rank(from),
      ...(tier !== undefined ? { tier } : {}),
    };
    transition.count += 1;
    if (transition.decisionIds.length < LISTED_IDS) transition.decisionIds.push(decisionId);
    this.transitions.set(id, transition);
  }
}

/** The paths (a.b[0].c) of the values recorded masked ({"masked": "..."}), outermost first. */
export function maskedPaths(value: unknown, path = ''): string[] {
  if (isMasked(value)) return [path];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, member]) =>
    maskedPaths(member, Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key),
  );
}

function isMasked(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return (
    keys.length === 1 && keys[0] === 'masked' && typeof (value as { masked: unknown }).masked === 'string'
  );
}

/**
 * Whether a text (a condition, a validation message) names a masked field: by the first
 * name of its path, so `parameters.login.user` counts for a masked `login.password` (the
 * safe side: such a decision is not replayed rather than replayed wrong).
 */
function mentionsAny(text: string, paths: readonly string[]): boolean {
  return paths.some((path) => {
    const first = /^[^.[]+/.exec(path)?.[0];
    return first !== undefined && new RegExp(`\\b${escapeRegExp(first)}\\b`).test(text);
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Over the limit then, or allowed under a limited grant: the counter decided or could have. */
/** A tool-proxy call of a pinned tool is decided on the definition its upstream listed then. */
function observationsOf(data: DecisionData): Observations {
  const digest = data.mcp?.definition_digest;
  return digest === undefined ? {} : { toolDefinitionDigest: digest };
}

function dependedOnRateLimit(data: DecisionData): boolean {
  return (
    data.evaluation.authority_check === 'rate_limited' || data.decision.constraints?.rate_limit !== undefined
  );
}

function rank(outcome: Outcome): number {
  return OUTCOME_RESTRICTIVENESS.indexOf(outcome);
}

function key(t: Pick<Transition, 'from' | 'to' | 'tier'>): string {
  return `${t.from} -> ${t.to} ${t.tier ?? ''}`;
}
