import { useState } from 'preact/hooks';
import type { AuditEntry, DecisionView, Page, Trail } from '../api/types.js';
import { ConfirmationToken } from '../components/confirmation-token.js';
import { EvaluationStages } from '../components/evaluation-stages.js';
import { JsonBlock } from '../components/json-block.js';
import { Loaded } from '../components/loaded.js';
import { OutcomeBadge, StatusBadge } from '../components/outcome-badge.js';
import { ProofStatus } from '../components/proof-status.js';
import { ReviewButtons } from '../components/review-dialog.js';
import { formatTime } from '../format.js';
import { hrefOf } from '../route.js';
import { useSession } from '../session-context.js';
import { useFetch } from '../use-fetch.js';

/** The trail and the decision's own audit entry (for the proof), under audit:read. */
interface AuditSide {
  trail: Trail;
  entry: AuditEntry | undefined;
}

function Facts({ decision }: { decision: DecisionView }) {
  const a = decision.audit;
  const rows: [string, preact.ComponentChildren][] = [
    ['Outcome', <OutcomeBadge outcome={decision.outcome} />],
    ['Reason', decision.reason],
    ['Risk score', decision.risk_score.toFixed(2)],
    ['Actor', a.actor_id],
    ['Capability', a.capability],
    ['Review', <StatusBadge status={a.status} />],
    ['Expires', a.expires_at ? formatTime(a.expires_at) : '—'],
    ['Proposed by', `${a.principal} (${a.source})`],
    ['Time', formatTime(decision.timestamp)],
    ['Decision id', <code>{decision.decision_id}</code>],
  ];
  return (
    <dl class="facts">
      {rows.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function Integrity({ side }: { side: AuditSide }) {
  const i = side.trail.integrity;
  return (
    <>
      <dl class="facts">
        <div>
          <dt>Entry</dt>
          <dd>seq {i.seq}</dd>
        </div>
        <div>
          <dt>Hash</dt>
          <dd>
            <code class="hash">{i.hash}</code>
          </dd>
        </div>
        <div>
          <dt>Previous hash</dt>
          <dd>
            <code class="hash">{i.previous_hash}</code>
          </dd>
        </div>
        <div>
          <dt>Chain verified</dt>
          <dd data-testid="chain-verified">
            {i.chain_verified
              ? 'yes: the chain holds from the last checkpoint to this entry'
              : 'NO: the chain is broken before this entry'}
          </dd>
        </div>
      </dl>
      {i.inclusion_proof && side.entry ? (
        <ProofStatus entry={side.entry} trailHash={i.hash} proof={i.inclusion_proof} />
      ) : (
        <p class="muted">
          No signed checkpoint covers this entry yet, so there is no inclusion proof to check.
        </p>
      )}
    </>
  );
}

export function DecisionDetailView({ decisionId }: { decisionId: string }) {
  const { client, can } = useSession();
  const path = encodeURIComponent(decisionId);
  const decision = useFetch(() => client.get<DecisionView>(`governance/decisions/${path}`), [client, path]);
  const audit = useFetch(async (): Promise<AuditSide | null> => {
    if (!can('audit:read')) return null;
    const [trail, entries] = await Promise.all([
      client.get<Trail>(`audit/log/${path}`),
      client.get<Page<'entries', AuditEntry>>('audit/log', {
        decision_id: decisionId,
        event_type: 'governance.decision',
        limit: '1',
      }),
    ]);
    return { trail, entry: entries.entries[0] };
  }, [client, path]);
  const [token, setToken] = useState<string | null>(null);
  const reviewed = (result: DecisionView) => {
    if (result.confirmation_token) setToken(result.confirmation_token);
    decision.reload();
    audit.reload();
  };
  return (
    <section aria-labelledby="detail-title">
      <header class="view-header">
        <h1 id="detail-title">Decision</h1>
        <a href={hrefOf({ view: 'decisions' })}>All decisions</a>
      </header>
      {token && <ConfirmationToken token={token} decisionId={decisionId} onDismiss={() => setToken(null)} />}
      <Loaded fetched={decision}>
        {(d) => (
          <>
            <Facts decision={d} />
            {d.audit.status === 'pending' && can('governance:review') && (
              <ReviewButtons decision={d} onReviewed={reviewed} />
            )}
            <h2>Request</h2>
            <JsonBlock
              label="Parameters"
              value={
                audit.data?.trail.request ?? {
                  actor: { id: d.audit.actor_id },
                  action: { capability: d.audit.capability, parameters: d.audit.parameters },
                }
              }
            />
            <h2>Reviews</h2>
            {d.audit.reviews.length === 0 ? (
              <p class="empty">No review.</p>
            ) : (
              <ul class="reviews">
                {d.audit.reviews.map((r) => (
                  <li key={r.timestamp}>
                    <strong>{r.action}</strong> by {r.reviewer} at {formatTime(r.timestamp)}
                    {r.comment && <>: “{r.comment}”</>}
                  </li>
                ))}
              </ul>
            )}
            <h2>Execution</h2>
            {d.audit.execution ? (
              <JsonBlock label="Execution" value={d.audit.execution} />
            ) : (
              <p class="empty">Not reported.</p>
            )}
          </>
        )}
      </Loaded>
      {can('audit:read') ? (
        <Loaded fetched={audit}>
          {(side) =>
            side && (
              <>
                <h2>Evaluation</h2>
                <EvaluationStages evaluation={side.trail.evaluation} />
                <h2>Integrity</h2>
                <Integrity side={side} />
              </>
            )
          }
        </Loaded>
      ) : (
        <p class="muted">The evaluation trail and the integrity check need the scope audit:read.</p>
      )}
    </section>
  );
}
