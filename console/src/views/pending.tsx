import { useEffect, useState } from 'preact/hooks';
import { followEventStream, type FeedState } from '../api/live-feed.js';
import type { DecisionView, Page } from '../api/types.js';
import { ConfirmationToken } from '../components/confirmation-token.js';
import { DataTable } from '../components/data-table.js';
import { Loaded } from '../components/loaded.js';
import { OutcomeBadge } from '../components/outcome-badge.js';
import { ReviewButtons } from '../components/review-dialog.js';
import { formatDuration } from '../format.js';
import { hrefOf } from '../route.js';
import { useSession } from '../session-context.js';
import { useFetch, useNow } from '../use-fetch.js';

/**
 * Refreshes the queue whenever the live pending queue (governance:read) says a decision
 * started or stopped waiting; once more when the stream (re)connects, for what it missed.
 */
function useLiveRefresh(reload: () => void): string {
  const { client } = useSession();
  const [state, setState] = useState<FeedState>('connecting');
  useEffect(
    () =>
      followEventStream(client, 'governance/pending', reload, (s) => {
        setState(s);
        if (s === 'live') reload();
      }),
    [client, reload],
  );
  return state === 'live' ? 'live' : `${state}…`;
}

export function PendingView() {
  const { client, can } = useSession();
  const fetched = useFetch(
    () => client.get<Page<'decisions', DecisionView>>('governance/pending', { limit: '200' }),
    [client],
  );
  const [token, setToken] = useState<{ token: string; decisionId: string } | null>(null);
  const [reviewed, setReviewed] = useState<Set<string>>(new Set());
  const live = useLiveRefresh(fetched.reload);
  const now = useNow();
  const onReviewed = (result: DecisionView) => {
    setReviewed((r) => new Set(r).add(result.decision_id));
    if (result.confirmation_token)
      setToken({ token: result.confirmation_token, decisionId: result.decision_id });
    fetched.reload();
  };
  return (
    <section aria-labelledby="pending-title">
      <header class="view-header">
        <h1 id="pending-title">Pending reviews</h1>
        <span class="live" role="status">
          {live}
        </span>
      </header>
      {token && <ConfirmationToken {...token} onDismiss={() => setToken(null)} />}
      <Loaded fetched={fetched}>
        {(page) => {
          // Past its deadline a decision has expired, even before the server records it.
          const waiting = page.decisions.filter(
            (d) =>
              !reviewed.has(d.decision_id) && (!d.audit.expires_at || Date.parse(d.audit.expires_at) > now),
          );
          if (waiting.length === 0) return <p class="empty">No decision is waiting for review.</p>;
          return (
            <DataTable
              caption={
                <>
                  {waiting.length} decision{waiting.length === 1 ? '' : 's'} waiting, oldest first
                </>
              }
              columns={['Actor', 'Capability', 'Outcome', 'Reason', 'Risk', 'Age', 'Expires in', 'Actions']}
            >
              {waiting.map((d) => (
                <tr key={d.decision_id} data-decision-id={d.decision_id}>
                  <td>{d.audit.actor_id}</td>
                  <td>
                    <a href={hrefOf({ view: 'decisions', decisionId: d.decision_id })}>
                      {d.audit.capability}
                    </a>
                  </td>
                  <td>
                    <OutcomeBadge outcome={d.outcome} />
                  </td>
                  <td class="reason">{d.reason}</td>
                  <td class="number">{d.risk_score.toFixed(2)}</td>
                  <td>{formatDuration(now - Date.parse(d.timestamp))}</td>
                  <td>{d.audit.expires_at ? formatDuration(Date.parse(d.audit.expires_at) - now) : '—'}</td>
                  <td>
                    {can('governance:review') ? (
                      <ReviewButtons decision={d} onReviewed={onReviewed} />
                    ) : (
                      <span class="muted">read only</span>
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          );
        }}
      </Loaded>
    </section>
  );
}
