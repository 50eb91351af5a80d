import { hash, randomBytes } from 'node:crypto';
import type { AuditEntry, AuditLog } from '../audit/audit-log.js';
import { canonicalJson } from '../audit/chain.js';
import {
  completeDecision,
  evaluateProposal,
  type EngineSettings,
  type RateLimiter,
} from '../engine/index.js';
import type { IndexSnapshot } from '../index/index.js';
import type { OneTimeUses } from '../one-time-uses/index.js';
import {
  ArbiterError,
  type Decision,
  type EngineDecision,
  type Proposal,
  randomUuid,
  type ShadowDecision,
} from '../model/index.js';
import { useApproval } from './approval-use.js';
import { foldDecision, type DecisionRecord, type ExecutionData, type ReviewData } from './decision-record.js';
import { DecisionRecorder } from './decision-recorder.js';
import type { ParameterMasker } from './parameter-masker.js';

export interface DecisionServiceDeps {
  index: { current(): IndexSnapshot };
  audit: AuditLog;
  limiter: RateLimiter;
  settings: EngineSettings;
  clock: () => Date;
  /** How long ESCALATE and REQUIRE_CONFIRMATION decisions stay pending. */
  pendingTtlSeconds: number;
  newId?: () => string;
  /** Told of every decision a warn- or audit-mode policy would have changed (metrics). */
  onShadowDecision?: (shadow: ShadowDecision) => void;
  /** Told of every decision recorded (metrics). */
  onDecision?: (decided: EngineDecision) => void;
  /** Masks sensitive parameters in what is recorded. */
  masker?: ParameterMasker;
  /** Where a confirmation token's one use is claimed, shared by the replicas. */
  uses: OneTimeUses;
}

export interface ReviewResult {
  record: DecisionRecord;
  /** One-time token, returned once, when a REQUIRE_CONFIRMATION decision is approved. */
  confirmation_token?: string;
}

/** Who reviews: a principal, with the Kubernetes identity behind it if there is one. */
export interface Reviewer {
  name: string;
  /** Every name the reviewer's own decisions record as proposer; default [name]. */
  proposesAs?: readonly string[];
  /** As the API server authenticated it; recorded with the review. */
  kubernetes?: { username: string; groups: readonly string[] };
}

const TOKEN_PREFIX = 'ct_';
/** Who records an expiry: Arbiter itself. */
const EXPIRY_REVIEWER = 'arbiter';

/**
 * The use cases of governance: propose, review, report execution. It composes the pure
 * engine with the audit log; every decision is stored before it is returned (fail-closed).
 */
export class DecisionService {
  /** Writes decisions and reviews; the admission webhook's decisions share it. */
  readonly recorder: DecisionRecorder;

  constructor(private readonly deps: DecisionServiceDeps) {
    this.recorder = new DecisionRecorder({
      audit: deps.audit,
      clock: deps.clock,
      pendingTtlSeconds: deps.pendingTtlSeconds,
      newId: deps.newId ?? randomUuid,
      ...(deps.onShadowDecision ? { onShadowDecision: deps.onShadowDecision } : {}),
      ...(deps.onDecision ? { onDecision: deps.onDecision } : {}),
      ...(deps.masker ? { masker: deps.masker } : {}),
    });
  }

  async propose(proposal: Proposal, principal: string): Promise<Decision> {
    const now = this.deps.clock();
    const preliminary = evaluateProposal(this.deps.index.current(), proposal, now, this.deps.settings);
    const admitted = await this.deps.limiter.admitAll(preliminary.rateLimits, now.getTime());
    let decided = completeDecision(preliminary, admitted);
    const token = proposal.context?.confirmation_token;
    if (token === undefined) return this.recorder.record(proposal, decided, principal, now);
    const confirmed = await this.redeem(token, proposal, decided, principal, now);
    decided = confirmed?.decided ?? decided;
    return this.recorder.record(proposal, decided, principal, now, { confirmationOf: confirmed?.of });
  }

  async get(decisionId: string): Promise<DecisionRecord> {
    const entries = await this.deps.audit.byDecision(decisionId);
    const record = foldDecision(entries, this.deps.clock());
    if (!record) {
      const { anchor } = await this.deps.audit.retained();
      // It may be one of the archived: say where to look.
      const archived = anchor
        ? ` in the retained audit log (entries up to seq ${anchor.seq} are archived, the newest in ${anchor.archive})`
        : '';
      throw new ArbiterError('NOT_FOUND', `no decision ${decisionId}${archived}`);
    }
    return record;
  }

  async review(
    decisionId: string,
    action: 'approve' | 'deny',
    reviewer: Reviewer | string,
    comment?: string,
  ): Promise<ReviewResult> {
    const who = typeof reviewer === 'string' ? { name: reviewer } : reviewer;
    const record = await this.get(decisionId);
    refuseOwnApproval(action, who, record);
    if (record.status === 'not_required') {
      throw new ArbiterError(
        'CONFLICT',
        `decision ${decisionId} is ${record.decision.outcome}; only ESCALATE and REQUIRE_CONFIRMATION are reviewed`,
      );
    }
    // An overdue decision is refused here but its expiry is written by the leader's sweeper
    // (recordExpiry), so that it is written once across replicas.
    if (record.status !== 'pending')
      throw new ArbiterError('CONFLICT', `decision ${decisionId} is already ${record.status}`);
    // An admission or tool-proxy decision is used by retrying the same request, not by a token.
    const issueToken =
      action === 'approve' &&
      record.decision.outcome === 'REQUIRE_CONFIRMATION' &&
      record.data.source === undefined;
    const token = issueToken
      ? `${TOKEN_PREFIX}${decisionId}.${randomBytes(24).toString('base64url')}`
      : undefined;
    await this.recorder.appendReview(record, {
      action,
      ...reviewerData(who),
      ...(comment ? { comment } : {}),
      ...(token ? { token_sha256: sha256(token) } : {}),
    });
    return { record: await this.get(decisionId), ...(token ? { confirmation_token: token } : {}) };
  }

  /**
   * Records that a pending decision expired, once its deadline has passed and unless a
   * verdict or the expiry is recorded already. Resolves with the entry when it wrote one.
   */
  async recordExpiry(decisionId: string): Promise<AuditEntry | undefined> {
    const record = await this.get(decisionId);
    if (record.status !== 'expired' || record.reviews.some((r) => r.data.action === 'expire'))
      return undefined;
    return this.recorder.appendReview(record, { action: 'expire', reviewer: EXPIRY_REVIEWER });
  }

  async reportExecution(
    decisionId: string,
    report: Omit<ExecutionData, 'completed_at' | 'reporter'>,
    reporter: string,
  ): Promise<DecisionRecord> {
    const record = await this.get(decisionId);
    const executable = record.decision.outcome === 'ALLOW' || record.status === 'approved';
    if (!executable)
      throw new ArbiterError('CONFLICT', `decision ${decisionId} was not allowed; nothing may be executed`);
    if (record.execution)
      throw new ArbiterError('CONFLICT', `execution of decision ${decisionId} was already reported`);
    const data: ExecutionData = { ...report, completed_at: this.deps.clock().toISOString(), reporter };
    await this.recorder.appendExecution(record.entry, data);
    return this.get(decisionId);
  }

  /**
   * A confirmation token turns the REQUIRE_CONFIRMATION of the exact proposal it was issued
   * for into ALLOW, once. It never lifts a DENY or an ESCALATE the configuration now demands.
   */
  private async redeem(
    token: string,
    proposal: Proposal,
    decided: EngineDecision,
    principal: string,
    now: Date,
  ) {
    const decisionId = token.startsWith(TOKEN_PREFIX)
      ? token.slice(TOKEN_PREFIX.length).split('.')[0]
      : undefined;
    const invalid = new ArbiterError(
      'INVALID_REQUEST',
      'context.confirmation_token is not valid for this proposal',
    );
    if (!decisionId) throw invalid;
    const record = foldDecision(await this.deps.audit.byDecision(decisionId), now);
    // Only the approval that issued the token carries its hash.
    const approval = record?.reviews.find((r) => r.data.token_sha256 === sha256(token));
    if (!record || !approval) throw invalid;
    const used = new ArbiterError('CONFLICT', 'context.confirmation_token was already used');
    if (record.reviews.some((r) => r.data.action === 'confirmation_used')) throw used;
    // The record holds the proposal masked: compare it with this one masked alike.
    if (fingerprint(record.data.request) !== fingerprint(this.recorder.recorded(proposal))) throw invalid;
    if (decided.outcome !== 'REQUIRE_CONFIRMATION') return undefined;
    // Another request, on this replica or another, may have read the record unused as well.
    const recordUse = () =>
      this.recorder.appendReview(record, { action: 'confirmation_used', reviewer: principal });
    if (!(await useApproval(this.deps.uses, record, now, recordUse))) throw used;
    const reason = `confirmed by ${approval.data.reviewer} (decision ${decisionId}); ${decided.reason}`;
    return { of: decisionId, decided: { ...decided, outcome: 'ALLOW' as const, reason } };
  }
}

/** Four eyes: nobody approves what they proposed (withdrawing it by a deny is fine). */
function refuseOwnApproval(action: 'approve' | 'deny', who: Reviewer, record: DecisionRecord): void {
  if (action !== 'approve' || !(who.proposesAs ?? [who.name]).includes(record.data.principal)) return;
  throw new ArbiterError(
    'FORBIDDEN',
    `"${who.name}" proposed decision ${record.decision.decision_id} and may not approve it; another reviewer must`,
  );
}

/** Who reviewed, as the review's audit entry records it. */
function reviewerData(who: Reviewer): Pick<ReviewData, 'reviewer' | 'reviewer_groups' | 'reviewer_username'> {
  if (!who.kubernetes) return { reviewer: who.name };
  return {
    reviewer: who.name,
    reviewer_groups: [...who.kubernetes.groups],
    reviewer_username: who.kubernetes.username,
  };
}

function sha256(text: string): string {
  return hash('sha256', text, 'hex');
}

/** The identity of a proposal for confirmation: who, what, with which parameters. */
function fingerprint(proposal: Proposal): string {
  return sha256(canonicalJson({ actor: proposal.actor, action: proposal.action }));
}
