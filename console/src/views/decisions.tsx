import type { Query } from '../api/client.js';
import { fetchPages } from '../api/pages.js';
import { OUTCOMES, type DecisionView, type Page } from '../api/types.js';
import { DataTable } from '../components/data-table.js';
import { bucketDecisions, DecisionsChart } from '../components/decisions-chart.js';
import { FilterForm, type FilterField } from '../components/filter-form.js';
import { Loaded } from '../components/loaded.js';
import { OutcomeBadge, StatusBadge } from '../components/outcome-badge.js';
import { Pager } from '../components/pager.js';
import { formatTime } from '../format.js';
import { hrefOf } from '../route.js';
import { useSession } from '../session-context.js';
import { useFilteredList } from '../use-filtered-list.js';
import { useFetch } from '../use-fetch.js';

const FIELDS: FilterField[] = [
  { name: 'namespace', label: 'Namespace', kind: 'text' },
  { name: 'actor_id', label: 'Actor', kind: 'text' },
  { name: 'capability', label: 'Capability', kind: 'text' },
  { name: 'outcome', label: 'Outcome', kind: 'choice', choices: OUTCOMES },
  { name: 'since', label: 'From', kind: 'time' },
  { name: 'until', label: 'To', kind: 'time' },
];
/** The chart counts at most this many pages of 200 decisions. */
const CHART_PAGES = 5;

function DecisionsByMinute({ query }: { query: Query }) {
  const { client } = useSession();
  const fetched = useFetch(
    () =>
      fetchPages<'decisions', DecisionView>(client, 'governance/decisions', 'decisions', query, CHART_PAGES),
    [client, query],
  );
  return (
    <Loaded fetched={fetched}>
      {({ items, complete }) => {
        const until = query.until ? Date.parse(query.until) : Date.now();
        const since = query.since
          ? Date.parse(query.since)
          : Math.min(until - 60_000, ...items.map((d) => Date.parse(d.timestamp)));
        const series = bucketDecisions(items, since, until);
        const totals = OUTCOMES.map((o) => `${o} ${series.counts[o].reduce((a, b) => a + b, 0)}`).join(', ');
        const scope = complete ? '' : ` (the newest ${items.length} only)`;
        return (
          <DecisionsChart
            series={series}
            summary={`Decisions per minute by outcome, ${formatTime(new Date(since).toISOString())} to ${formatTime(new Date(until).toISOString())}${scope}: ${totals}`}
          />
        );
      }}
    </Loaded>
  );
}

export function DecisionsView() {
  const { client } = useSession();
  const list = useFilteredList(
    (query, cursor) =>
      client.get<Page<'decisions', DecisionView>>('governance/decisions', { ...query, limit: '50', cursor }),
    [client],
  );
  const { pages, fetched, query } = list;
  return (
    <section aria-labelledby="decisions-title">
      <header class="view-header">
        <h1 id="decisions-title">Decisions</h1>
      </header>
      <FilterForm fields={FIELDS} initial={list.filters} onApply={list.apply} />
      <DecisionsByMinute query={query} />
      <Loaded fetched={fetched}>
        {(page) => (
          <>
            <DataTable
              caption="Decisions, newest first"
              columns={['Time', 'Namespace', 'Actor', 'Capability', 'Outcome', 'Risk', 'Review', 'Reason']}
            >
              {page.decisions.map((d) => (
                <tr key={d.decision_id} data-decision-id={d.decision_id}>
                  <td>
                    <a href={hrefOf({ view: 'decisions', decisionId: d.decision_id })}>
                      {formatTime(d.timestamp)}
                    </a>
                  </td>
                  <td data-column="namespace">{d.namespace ?? '—'}</td>
                  <td>{d.audit.actor_id}</td>
                  <td>{d.audit.capability}</td>
                  <td>
                    <OutcomeBadge outcome={d.outcome} />
                  </td>
                  <td class="number">{d.risk_score.toFixed(2)}</td>
                  <td>
                    <StatusBadge status={d.audit.status} />
                  </td>
                  <td class="reason">{d.reason}</td>
                </tr>
              ))}
            </DataTable>
            {page.decisions.length === 0 && <p class="empty">No decision matches these filters.</p>}
            <Pager pages={pages} nextCursor={page.cursor} total={page.total} shown={page.decisions.length} />
          </>
        )}
      </Loaded>
    </section>
  );
}
