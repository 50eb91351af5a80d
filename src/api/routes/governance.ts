import { Router } from 'express';
import { mayActAs } from '../../auth/index.js';
import type { DecisionRecord } from '../../governance/decision-record.js';
import { ArbiterError, type EventType, type Outcome } from '../../model/index.js';
import type { ApiDependencies } from '../dependencies.js';
import { makeGuard, principalOf, stringQuery } from '../handler.js';
import { jsonBody } from '../json-body.js';
import { decodeCursor, encodeCursor, parseLimit } from '../paging.js';
import { makeProposer } from '../proposer.js';
import { decisionQuerySchema, executionBodySchema, reviewBodySchema } from '../request-schemas.js';
import { compileValidator } from '../validation.js';

const validateDecisionQuery = compileValidator<Record<string, string | undefined>>(
  decisionQuerySchema,
  'query',
);
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
    audit: {
      status: record.status,
      expires_at: record.data.expires_at ?? null,
      actor_id: record.data.request.actor.id,
      capability: record.data.request.action.capability,
      principal: record.data.principal,
      source: record.data.source ?? 'api',
      kubernetes: record.data.kubernetes ?? null,
      policy_matched: record.data.evaluation.policy_matched,
      reviews: record.reviews.map((r) => ({
        action: r.data.action,
        reviewer: r.data.reviewer,
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

export function governanceRoutes(deps: ApiDependencies): Router {
  const router = Router();
  const guard = makeGuard(deps);

  const propose = makeProposer(deps);
  router.post('/governance/propose', guard('governance:propose'), jsonBody, async (req, res) => {
    res.json(await propose(req.principal!, req.body));
  });

  router.get('/governance/decisions', guard('governance:read'), async (req, res) => {
    const query = validateDecisionQuery(stringQuery(req));
    const limit = parseLimit(query.limit);
    const scope = JSON.stringify([
      'decisions',
      query.actor_id,
      query.capability,
      query.outcome,
      query.since,
      query.until,
    ]);
    const after = decodeCursor<number>(query.cursor, scope, 'number');
    const page = await deps.audit.query({
      event_type: 'governance.decision' satisfies EventType,
      ...(query.actor_id ? { actor_id: query.actor_id } : {}),
      ...(query.capability ? { capability: query.capability } : {}),
      ...(query.outcome ? { outcome: query.outcome as Outcome } : {}),
      ...(query.since ? { since: new Date(query.since).toISOString() } : {}),
      ...(query.until ? { until: new Date(query.until).toISOString() } : {}),
      order: 'desc',
      limit,
      ...(after === undefined ? {} : { after }),
    });
    const records = await Promise.all(page.entries.map((e) => deps.decisions.get(e.decision_id ?? '')));
    res.json({
      decisions: records.map(decisionView),
      total: page.total,
      cursor: page.next === null ? null : encodeCursor(page.next, scope),
    });
  });

  router.get('/governance/decisions/:id', guard('governance:read'), async (req, res) => {
    res.json(decisionView(await deps.decisions.get(String(req.params.id))));
  });

  for (const action of ['approve', 'deny'] as const) {
    router.post(
      `/governance/decisions/:id/${action}`,
      guard('governance:review'),
      jsonBody,
      async (req, res) => {
        const body = validateReview(req.body);
        const result = await deps.decisions.review(
          String(req.params.id),
          action,
          principalOf(req),
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
    guard('governance:propose'),
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
