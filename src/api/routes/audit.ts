import { Router } from 'express';
import type { AuditEntry, AuditQuery, RetainedRange } from '../../audit/audit-log.js';
import { storedText } from '../../audit/chain.js';
import { entryNamespace } from '../../audit/entry-namespace.js';
import type { DecisionRecord } from '../../governance/decision-record.js';
import { decidingTier, recordNamespace, type EventType, type Outcome } from '../../model/index.js';
import type { ApiDependencies } from '../dependencies.js';
import { streamAuditEvents, wantsEventStream } from '../event-stream.js';
import { makeGuard, principalOf, stringQuery } from '../handler.js';
import { jsonBody } from '../json-body.js';
import { decodeCursor, encodeCursor, parseLimit } from '../paging.js';
import { archiveBodySchema, auditQuerySchema, eventsQuerySchema } from '../request-schemas.js';
import { latestInclusionProof, type inclusionProofView } from '../signed-tree.js';
import { compileValidator } from '../validation.js';
import { requireVisible, visibilityOfRequest, visiblePage } from '../visible-records.js';

type InclusionProofView = ReturnType<typeof inclusionProofView>;

type AuditQueryParams = Partial<
  Record<
    | 'actor_id'
    | 'capability'
    | 'outcome'
    | 'decision_id'
    | 'since'
    | 'until'
    | 'event_type'
    | 'namespace'
    | 'order'
    | 'limit'
    | 'cursor',
    string
  >
>;

const validateAuditQuery = compileValidator<AuditQueryParams>(auditQuerySchema, 'query');
const validateEventsQuery = compileValidator<{ event_type?: string; limit?: string; cursor?: string }>(
  eventsQuerySchema,
  'query',
);
const validateExportQuery = compileValidator<AuditQueryParams>(
  {
    ...auditQuerySchema,
    properties: { ...auditQuerySchema.properties, limit: { not: {} }, cursor: { not: {} } },
  },
  'query',
);

const validateArchive = compileValidator<{ before: string }>(archiveBodySchema, 'archive request');

/**
 * Whether a query reaches back before the retained range, so that archives may hold
 * more of what it asks for: no lower time bound, or one before the archive's checkpoint.
 */
function reachesArchives(retained: RetainedRange, since: string | undefined): boolean {
  const anchor = retained.anchor;
  return anchor !== null && (since === undefined || Date.parse(since) <= Date.parse(anchor.checkpoint_time));
}

/** service-interface.md 2.6, plus seq so a reader can re-verify the chain. */
export function entryView(entry: AuditEntry) {
  return {
    id: entry.id,
    seq: entry.seq,
    event_type: entry.event_type,
    timestamp: entry.timestamp,
    actor_id: entry.actor_id,
    capability: entry.capability,
    outcome: entry.outcome,
    risk_score: entry.risk_score,
    decision_id: entry.decision_id,
    policies_evaluated: entry.policies_evaluated,
    policy_matched: entry.policy_matched,
    data: entry.data,
    // Only where set: the hash covers it, and entries without it must read as before.
    ...(entry.namespace !== undefined ? { namespace: entry.namespace } : {}),
    hash: entry.hash,
    previous_hash: entry.previous_hash,
  };
}

function filtersOf(query: AuditQueryParams): Omit<AuditQuery, 'limit' | 'order'> {
  return {
    ...(query.actor_id ? { actor_id: query.actor_id } : {}),
    ...(query.capability ? { capability: query.capability } : {}),
    ...(query.outcome ? { outcome: query.outcome as Outcome } : {}),
    ...(query.decision_id ? { decision_id: query.decision_id } : {}),
    ...(query.event_type ? { event_type: query.event_type as EventType } : {}),
    ...(query.namespace ? { namespace: query.namespace } : {}),
    ...(query.since ? { since: new Date(query.since).toISOString() } : {}),
    ...(query.until ? { until: new Date(query.until).toISOString() } : {}),
  };
}

/** service-interface.md 2.7. */
function trailView(
  record: DecisionRecord,
  chainVerified: boolean,
  inclusionProof: InclusionProofView | null,
) {
  const { evaluation } = record.data;
  return {
    decision_id: record.decision.decision_id,
    namespace: entryNamespace(record.entry),
    request: record.data.request,
    evaluation: {
      capability_check: evaluation.capability_check,
      authority_check: evaluation.authority_check,
      tier: decidingTier(evaluation),
      risk_score: evaluation.risk_score,
      risk_threshold: evaluation.risk_threshold,
      policies_evaluated: evaluation.policies_evaluated,
      policy_matched: evaluation.policy_matched,
      rule_matched: evaluation.rule_matched,
      rules: evaluation.rules,
      risk_override: evaluation.risk_override,
      // What a warn- or audit-mode policy would have decided, when it would have changed it.
      shadow_decision: evaluation.shadow_decision ?? null,
    },
    decision: {
      outcome: record.decision.outcome,
      reason: record.decision.reason,
      constraints: record.decision.constraints,
      timestamp: record.decision.timestamp,
    },
    review: {
      status: record.status,
      expires_at: record.data.expires_at ?? null,
      reviews: record.reviews.map((r) => ({
        action: r.data.action,
        reviewer: r.data.reviewer,
        comment: r.data.comment ?? null,
        timestamp: r.entry.timestamp,
      })),
    },
    execution: record.execution
      ? {
          status: record.execution.data.status,
          result_summary: record.execution.data.result_summary,
          duration_ms: record.execution.data.duration_ms,
          completed_at: record.execution.data.completed_at,
          // The signed receipt the tool proxy sent upstream with the call, when it sent one.
          receipt: record.execution.data.receipt ?? null,
        }
      : null,
    integrity: {
      audit_ref: record.entry.id,
      seq: record.entry.seq,
      hash: record.entry.hash,
      previous_hash: record.entry.previous_hash,
      chain_verified: chainVerified,
      // Against the latest signed checkpoint; null until one covers the entry (or none is signed).
      inclusion_proof: inclusionProof,
    },
  };
}

export function auditRoutes(deps: ApiDependencies): Router {
  const router = Router();
  const guard = makeGuard(deps);
  // Routes that show each caller only its namespaces' entries; the others (verify, export,
  // proofs, checkpoints) are about the whole log and need cluster scope.
  const readEntries = guard('audit:read', { perNamespace: true });

  router.get('/audit/events', readEntries, async (req, res) => {
    const query = validateEventsQuery(stringQuery(req));
    const eventType = query.event_type as EventType | undefined;
    if (wantsEventStream(req)) {
      streamAuditEvents(req, res, deps, (entry) =>
        !eventType || entry.event_type === eventType
          ? { id: entry.seq, event: entry.event_type, data: entryView(entry) }
          : undefined,
      );
      return;
    }
    const limit = parseLimit(query.limit);
    const scope = JSON.stringify(['events', eventType]);
    const after = decodeCursor<number>(query.cursor, scope, 'number');
    const [page, retained] = await Promise.all([
      visiblePage(
        deps.audit,
        {
          ...(eventType ? { event_type: eventType } : {}),
          order: 'desc',
          limit,
          ...(after === undefined ? {} : { after }),
        },
        visibilityOfRequest(req),
      ),
      deps.audit.retained(),
    ]);
    res.json({
      events: page.entries.map(entryView),
      total: page.total,
      cursor: page.next === null ? null : encodeCursor(page.next, scope),
      retained,
    });
  });

  router.get('/audit/log', readEntries, async (req, res) => {
    const query = validateAuditQuery(stringQuery(req));
    const limit = parseLimit(query.limit);
    const filters = filtersOf(query);
    const order = query.order === 'desc' ? 'desc' : 'asc';
    const scope = JSON.stringify(['log', order, filters]);
    const after = decodeCursor<number>(query.cursor, scope, 'number');
    const [page, retained] = await Promise.all([
      visiblePage(
        deps.audit,
        { ...filters, order, limit, ...(after === undefined ? {} : { after }) },
        visibilityOfRequest(req),
      ),
      deps.audit.retained(),
    ]);
    res.json({
      entries: page.entries.map(entryView),
      total: page.total,
      cursor: page.next === null ? null : encodeCursor(page.next, scope),
      retained,
      // The answer holds retained entries only; older matches are in the archives.
      partial: reachesArchives(retained, filters.since),
    });
  });

  /** Bulk export: every matching entry as JSON Lines, streamed page by page, oldest first. */
  router.get('/audit/export', guard('audit:read'), async (req, res) => {
    const filters = filtersOf(validateExportQuery(stringQuery(req)));
    const retained = await deps.audit.retained();
    res.writeHead(200, {
      'Content-Type': 'application/x-ndjson',
      'Content-Disposition': 'attachment; filename="arbiter-audit.jsonl"',
      // Older entries are in archives: the export starts at this seq (its first line links to the anchor).
      'Arbiter-Retained-From-Seq': String(retained.from_seq),
    });
    let after: number | undefined;
    do {
      const page = await deps.audit.query({
        ...filters,
        order: 'asc',
        limit: 1000,
        ...(after === undefined ? {} : { after }),
      });
      // The stored form: `arbiter audit verify` hashes these lines as they are.
      const chunk = page.entries.map((e) => `${storedText(e)}\n`).join('');
      if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
      after = page.next ?? undefined;
    } while (after !== undefined && !res.destroyed);
    res.end();
  });

  router.get('/audit/verify', guard('audit:read'), async (_req, res) => {
    const report = await deps.audit.verify();
    res.json({ ...report, retained: report.retained ?? (await deps.audit.retained()) });
  });

  /** Archives the oldest entries to a file in the server's archive folder, then removes them. */
  router.post('/audit/archive', guard('admin'), jsonBody, async (req, res) => {
    const body = validateArchive(req.body);
    const result = await deps.archiver.run(new Date(body.before), principalOf(req));
    res.json(result);
  });

  router.get('/audit/log/:decision_id', readEntries, async (req, res) => {
    const id = String(req.params.decision_id);
    const record = await deps.decisions.get(id);
    await requireVisible(visibilityOfRequest(req), recordNamespace(record.entry), `no decision ${id}`);
    const [verified, proof] = await Promise.all([
      deps.audit.isVerified(record.entry.seq),
      latestInclusionProof(deps.audit, record.entry.seq),
    ]);
    res.json(trailView(record, verified, proof));
  });

  return router;
}
