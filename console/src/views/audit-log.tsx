import { useEffect, useState } from 'preact/hooks';
import { parseNamespacedActorId } from '../../../src/model/namespaced-actor-id.js';
import { followAuditFeed, type FeedState } from '../api/live-feed.js';
import type { Query } from '../api/client.js';
import { EVENT_TYPES, OUTCOMES, type AuditEntry, type Page } from '../api/types.js';
import { DataTable } from '../components/data-table.js';
import { FilterForm, type FilterField } from '../components/filter-form.js';
import { JsonBlock } from '../components/json-block.js';
import { Loaded } from '../components/loaded.js';
import { OutcomeBadge } from '../components/outcome-badge.js';
import { Pager } from '../components/pager.js';
import { formatTime } from '../format.js';
import { hrefOf } from '../route.js';
import { useSession } from '../session-context.js';
import { useFilteredList } from '../use-filtered-list.js';

const FIELDS: FilterField[] = [
  { name: 'event_type', label: 'Event type', kind: 'choice', choices: EVENT_TYPES },
  { name: 'namespace', label: 'Namespace', kind: 'text' },
  { name: 'actor_id', label: 'Actor', kind: 'text' },
  { name: 'capability', label: 'Capability', kind: 'text' },
  { name: 'outcome', label: 'Outcome', kind: 'choice', choices: OUTCOMES },
  { name: 'decision_id', label: 'Decision id', kind: 'text' },
  { name: 'since', label: 'From', kind: 'time' },
  { name: 'until', label: 'To', kind: 'time' },
];
const FILTERED_FIELDS = ['event_type', 'actor_id', 'capability', 'outcome', 'decision_id'] as const;

/** An entry's namespace, its actor's (`team-a/bot`): entries are served as hashed, naming none. */
function namespaceOf(entry: AuditEntry): string | null {
  return entry.actor_id === null ? null : (parseNamespacedActorId(entry.actor_id)?.namespace ?? null);
}
/** The live tail keeps this many entries on screen. */
const TAIL_LENGTH = 200;

/** Whether a streamed entry passes the filters, as the server would have filtered it. */
function matches(entry: AuditEntry, query: Query): boolean {
  if (FILTERED_FIELDS.some((f) => query[f] && entry[f] !== query[f])) return false;
  if (query.namespace && namespaceOf(entry) !== query.namespace) return false;
  return (!query.since || entry.timestamp >= query.since) && (!query.until || entry.timestamp <= query.until);
}

/** New entries as the SSE feed delivers them, newest first, while `on`. */
function useLiveTail(on: boolean, query: Query): { entries: AuditEntry[]; state: FeedState | 'off' } {
  const { client } = useSession();
  const [entries, setEntries] = useState<AuditEntry[]>([]);
  const [state, setState] = useState<FeedState | 'off'>('off');
  useEffect(() => {
    setEntries([]);
    if (!on) return setState('off');
    const stop = followAuditFeed(
      client,
      (entry) => matches(entry, query) && setEntries((list) => [entry, ...list].slice(0, TAIL_LENGTH)),
      setState,
    );
    return () => {
      stop();
      setState('off');
    };
  }, [on, client, query]);
  return { entries, state };
}

function EntryRows({ entries, fresh }: { entries: AuditEntry[]; fresh?: boolean }) {
  return (
    <>
      {entries.map((e) => (
        <tr key={e.seq} class={fresh ? 'fresh' : undefined} data-event-type={e.event_type}>
          <td class="number">{e.seq}</td>
          <td>{formatTime(e.timestamp)}</td>
          <td>{e.event_type}</td>
          <td data-column="namespace">{namespaceOf(e) ?? '—'}</td>
          <td>{e.actor_id ?? '—'}</td>
          <td>{e.capability ?? '—'}</td>
          <td>
            <OutcomeBadge outcome={e.outcome} />
          </td>
          <td>
            {e.decision_id ? (
              <a href={hrefOf({ view: 'decisions', decisionId: e.decision_id })}>
                {e.decision_id.slice(0, 8)}…
              </a>
            ) : (
              '—'
            )}
          </td>
          <td>
            <details>
              <summary>data</summary>
              <JsonBlock label={`Data of entry ${e.seq}`} value={e.data} />
            </details>
          </td>
        </tr>
      ))}
    </>
  );
}

export function AuditLogView() {
  const { client } = useSession();
  const [tail, setTail] = useState(false);
  const list = useFilteredList(
    (query, cursor) =>
      client.get<Page<'entries', AuditEntry>>('audit/log', { ...query, order: 'desc', limit: '50', cursor }),
    [client],
  );
  const { pages, fetched, query } = list;
  const live = useLiveTail(tail, query);
  return (
    <section aria-labelledby="audit-title">
      <header class="view-header">
        <h1 id="audit-title">Audit log</h1>
        <label class="toggle">
          <input type="checkbox" checked={tail} onChange={(e) => setTail(e.currentTarget.checked)} /> Live
          tail
        </label>
        <span class="live" role="status">
          {tail ? live.state : ''}
        </span>
      </header>
      <FilterForm fields={FIELDS} initial={list.filters} onApply={list.apply} />
      <Loaded fetched={fetched}>
        {(page) => (
          <>
            <DataTable
              caption={<>Audit entries, newest first{tail ? '; new entries appear at the top' : ''}</>}
              columns={[
                'Seq',
                'Time',
                'Event',
                'Namespace',
                'Actor',
                'Capability',
                'Outcome',
                'Decision',
                'Details',
              ]}
            >
              {pages.page === 1 && (
                <EntryRows
                  entries={live.entries.filter((e) => !page.entries.some((p) => p.seq === e.seq))}
                  fresh
                />
              )}
              <EntryRows entries={page.entries} />
            </DataTable>
            <Pager pages={pages} nextCursor={page.cursor} total={page.total} shown={page.entries.length} />
          </>
        )}
      </Loaded>
    </section>
  );
}
