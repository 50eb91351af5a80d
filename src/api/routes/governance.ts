import { Router, type Request } from 'express';
import { mayActAs, proposerNames, type Principal } from '../../auth/index.js';
import type { DecisionRecord } from '../../governance/decision-record.js';
import { entryNamespace } from '../../audit/entry-namespace.js';
import type { Reviewer } from '../../governance/decision-service.js';
import { reviewNamespace } from '../../governance/review-namespace.js';
import { ArbiterError, recordNamespace, type EventType, type Outcome } from '../../model/index.js';
import type { ApiDependencies } from '../dependencies.js';
import { streamAuditEvents, wantsEventStream } from '../event-stream.js';
import { pendingQueueEvent } from '../pending-events.js';
import { makeGuard, principalOf, stringQuery } from '../handler.js';
import { jsonBody } from '../json-body.js';
import { decodeCursor, encodeCursor, parseLimit } from '../paging.js';
import { makeProposer } from '../proposer.js';
import {
  decisionQuerySchema,
  executionBodySchema,
  pendingQuerySchema,
  reviewBodySchema,
} from '../request-schemas.js';
import { compileValidator } from '../validation.js';
import { requireVisible, visibilityOfRequest, visibleItems, visiblePage } from '../visible-records.js';

const validateDecisionQuery = compileValidator<Record<string, string | undefined>>(
  decisionQuerySchema,
  'query',
);
const validatePendingQuery = compileValidator<{ limit?: string; cursor?: string; namespace?: string }>(
  pendingQuerySchema,
  'query',
);
const PENDING_CURSOR_SCOPE = JSON.stringify(['pending']);
const validateReview = compileValidator<{ comment?: string }>(reviewBodySchema, 'review');
const validateExecution = compileValidator<{
  status: 'completed' | 'failed';
  result_summary?: string;
  duration_ms?: number;
}>(executionBodySchema, 'execution report');

/** A decision as GET returns it: the propose response plus what the audit log adds. */
export function decisionView(record: DecisionRecord) {
  return {
    ...record.decision,
    // Its actor's namespace (`team-a/bot`); null for cluster actors.
    namespace: entryNamespace(record.entry),
    audit: {
      status: record.status,
      expires_at: record.data.expires_at ?? null,
      actor_id: record.data.request.actor.id,
      capability: record.data.request.action.capability,
      // What a reviewer weighs: the action's parameters (the trail, under audit:read, has the rest).
      parameters: record.data.request.action.parameters,
      principal: record.data.principal,
      source: record.data.source ?? 'api',
      kubernetes: record.data.kubernetes ?? null,
      mcp: record.data.mcp ?? null,
      policy_matched: record.data.evaluation.policy_matched,
      reviews: record.reviews.map((r) => ({
        action: r.data.action,
        reviewer: r.data.reviewer,
        // A Kubernetes user's identity as the API server authenticated it.
        reviewer_username: r.data.reviewer_username ?? null,
        reviewer_groups: r.data.reviewer_groups ?? null,
        comment: r.data.comment ?? null,
        timestamp: r.entry.timestamp,
        audit_ref: r.entry.id,
      })),
      execution: record.execution ? { ...record.execution.data, audit_ref: record.execution.entry.id } : null,
      hash: record.entry.hash,
      seq: record.entry.seq,
    },
  };
}

/** The caller as a reviewer: its names as a proposer, and its Kubernetes identity if any. */
function reviewerOf(principal: Principal): Reviewer {
  return {
    name: principal.name,
    proposesAs: proposerNames(principal),
    ...(principal.kubernetes ? { kubernetes: principal.kubernetes } : {}),
  };
}

export function governanceRoutes(deps: ApiDependencies): Router {
  const router = Router();
  const guard = makeGuard(deps);

  const propose = makeProposer(deps);
  // A key limited to namespaces proposes for their actors only (mayActAs).
  router.post(
    '/governance/propose',
    guard('governance:propose', { perNamespace: true }),
    jsonBody,
    async (req, res) => {
      res.json(await propose(req.principal!, req.body));
    },
  );

  const read = guard('governance:read', { perNamespace: true });
  router.get('/governance/decisions', read, async (req, res) => {
    const query = validateDecisionQuery(stringQuery(req));
    const limit = parseLimit(query.limit);
    const scope = JSON.stringify([
      'decisions',
      query.actor_id,
      query.capability,
      query.outcome,
      query.since,
      query.until,
      // Only when set, so that cursors of queries without it stay valid.
      ...(query.namespace ? [query.namespace] : []),
    ]);
    const after = decodeCursor<number>(query.cursor, scope, 'number');
    const page = await visiblePage(
      deps.audit,
      {
        event_type: 'governance.decision' satisfies EventType,
        ...(query.actor_id ? { actor_id: query.actor_id } : {}),
        ...(query.capability ? { capability: query.capability } : {}),
        ...(query.outcome ? { outcome: query.outcome as Outcome } : {}),
        ...(query.namespace ? { namespace: query.namespace } : {}),
        ...(query.since ? { since: new Date(query.since).toISOString() } : {}),
        ...(query.until ? { until: new Date(query.until).toISOString() } : {}),
        order: 'desc',
        limit,
        ...(after === undefined ? {} : { after }),
      },
      visibilityOfRequest(req),
    );
    const records = await Promise.all(page.entries.map((e) => deps.decisions.get(e.decision_id ?? '')));
    res.json({
      decisions: records.map(decisionView),
      total: page.total,
      cursor: page.next === null ? null : encodeCursor(page.next, scope),
    });
  });

  router.get('/governance/pending', read, async (req, res) => {
    if (wantsEventStream(req)) {
      streamAuditEvents(req, res, deps, pendingQueueEvent);
      return;
    }
    const query = validatePendingQuery(stringQuery(req));
    const limit = parseLimit(query.limit);
    const after = decodeCursor<number>(query.cursor, PENDING_CURSOR_SCOPE, 'number') ?? 0;
    const nowMs = deps.clock().getTime();
    // Past its deadline, a decision is expired even before the sweeper records it.
    const waiting = await visibleItems(
      deps.pending
        .list()
        .filter((w) => w.expiresAtMs > nowMs && (!query.namespace || w.namespace === query.namespace)),
      visibilityOfRequest(req),
      (w) => w.namespace,
    );
    const page = waiting.filter((w) => w.seq > after).slice(0, limit);
    const records = await Promise.all(page.map((w) => deps.decisions.get(w.decisionId)));
    const last = page.at(-1);
    res.json({
      decisions: records.filter((r) => r.status === 'pending').map(decisionView),
      total: waiting.length,
      cursor: last && last !== waiting.at(-1) ? encodeCursor(last.seq, PENDING_CURSOR_SCOPE) : null,
    });
  });

  router.get('/governance/decisions/:id', read, async (req, res) => {
    const id = String(req.params.id);
    const record = await deps.decisions.get(id);
    await requireVisible(visibilityOfRequest(req), recordNamespace(record.entry), `no decision ${id}`);
    res.json(decisionView(record));
  });

  // For a Kubernetes user, RBAC is asked for `approve` or `deny` on decisions, named by
  // the decision's capability, so a Role may limit a reviewer to some capabilities.
  // Asked in the actor's namespace too when its reviewers may settle the escalation
  // (governance/review-namespace.ts), so that a RoleBinding there allows it.
  // The guard may ask for both the capability and the namespace: one read of the decision.
  const fetched = new WeakMap<Request, Promise<DecisionRecord>>();
  const decisionOf = (req: Request) => {
    let record = fetched.get(req);
    if (!record) fetched.set(req, (record = deps.decisions.get(String(req.params.id))));
    return record;
  };
  const capabilityOf = async (req: Request) => (await decisionOf(req)).data.request.action.capability;
  const namespaceOf = async (req: Request) => {
    const record = await decisionOf(req);
    return reviewNamespace(
      {
        actorId: record.data.request.actor.id,
        namespace: entryNamespace(record.entry),
        evaluation: record.data.evaluation,
      },
      deps.index.current(),
    );
  };
  for (const action of ['approve', 'deny'] as const) {
    router.post(
      `/governance/decisions/:id/${action}`,
      guard('governance:review', {
        verb: action,
        name: capabilityOf,
        namespace: namespaceOf,
        perNamespace: true,
      }),
      jsonBody,
      async (req, res) => {
        const body = validateReview(req.body);
        const result = await deps.decisions.review(
          String(req.params.id),
          action,
          reviewerOf(req.principal!),
          body.comment,
        );
        res.json({
          ...decisionView(result.record),
          ...(result.confirmation_token ? { confirmation_token: result.confirmation_token } : {}),
        });
      },
    );
  }

  router.post(
    '/governance/decisions/:id/execution',
    guard('governance:propose', { perNamespace: true }),
    jsonBody,
    async (req, res) => {
      const body = validateExecution(req.body);
      const record = await deps.decisions.get(String(req.params.id));
      if (!mayActAs(req.principal!, record.data.request.actor.id)) {
        throw new ArbiterError(
          'ACTOR_MISMATCH',
          `key "${principalOf(req)}" may not report for actor ${record.data.request.actor.id}`,
        );
      }
      const updated = await deps.decisions.reportExecution(
        String(req.params.id),
        {
          status: body.status,
          result_summary: body.result_summary ?? null,
          duration_ms: body.duration_ms ?? null,
        },
        principalOf(req),
      );
      res.status(201).json(decisionView(updated));
    },
  );

  return router;
}
