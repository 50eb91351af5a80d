import { useState } from 'preact/hooks';
import { fetchPages } from '../api/pages.js';
import type { Capability, Grant, Page, Policy } from '../api/types.js';
import { DataTable } from '../components/data-table.js';
import { JsonBlock } from '../components/json-block.js';
import { Loaded } from '../components/loaded.js';
import { OutcomeBadge } from '../components/outcome-badge.js';
import { useSession } from '../session-context.js';
import { useFetch } from '../use-fetch.js';

function Capabilities() {
  const { client } = useSession();
  const fetched = useFetch(
    () => fetchPages<'capabilities', Capability>(client, 'capabilities', 'capabilities'),
    [client],
  );
  return (
    <Loaded fetched={fetched}>
      {({ items }) => (
        <DataTable
          caption={<>Capabilities ({items.length})</>}
          columns={['Name', 'Risk level', 'Description', 'Parameters']}
        >
          {items.map((c) => (
            <tr key={c.name}>
              <td>{c.name}</td>
              <td>{c.risk_level}</td>
              <td>{c.description}</td>
              <td>
                <details>
                  <summary>schema</summary>
                  <JsonBlock label={`Parameter schema of ${c.name}`} value={c.parameter_schema} />
                </details>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </Loaded>
  );
}

function Policies() {
  const { client } = useSession();
  const fetched = useFetch(() => fetchPages<'policies', Policy>(client, 'policies', 'policies'), [client]);
  return (
    <Loaded fetched={fetched}>
      {({ items }) => (
        <DataTable
          caption={<>Policies ({items.length})</>}
          columns={['Name', 'Enabled', 'Enforcement', 'Ready', 'Rules']}
        >
          {items.map((p) => (
            <tr key={p.name}>
              <td>
                {p.name}
                <div class="muted">{p.description}</div>
              </td>
              <td>{p.enabled ? 'yes' : 'no'}</td>
              <td>{p.enforcement_action}</td>
              <td>
                {p.status
                  ? `${p.status.ready ? 'True' : 'False'} (${p.status.reason})${p.status.message ? `: ${p.status.message}` : ''}`
                  : 'unknown'}
              </td>
              <td>
                <ul class="rules">
                  {p.rules.map((r, i) => (
                    <li key={i}>
                      {r.capability}
                      {r.condition ? <code> if {r.condition}</code> : ''} →{' '}
                      <OutcomeBadge outcome={r.outcome} />
                      {r.priority === undefined ? '' : ` (priority ${r.priority})`}
                    </li>
                  ))}
                </ul>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </Loaded>
  );
}

function Grants({ actorId }: { actorId: string }) {
  const { client } = useSession();
  const fetched = useFetch(
    () => client.get<Page<'grants', Grant>>(`actors/${encodeURIComponent(actorId)}/grants`, { limit: '200' }),
    [client, actorId],
  );
  return (
    <Loaded fetched={fetched}>
      {(page) =>
        page.grants.length === 0 ? (
          <p class="empty">{actorId} holds no grant.</p>
        ) : (
          <DataTable caption={<>Grants of {actorId}</>} columns={['Capability', 'Constraints', 'Source']}>
            {page.grants.map((g) => (
              <tr key={`${g.capability}/${g.source}`}>
                <td>{g.capability}</td>
                <td>
                  {Object.keys(g.constraints).length ? (
                    <JsonBlock label={`Constraints of ${g.capability}`} value={g.constraints} />
                  ) : (
                    'none'
                  )}
                </td>
                <td>{g.source}</td>
              </tr>
            ))}
          </DataTable>
        )
      }
    </Loaded>
  );
}

/** Capabilities, policies and an actor's grants, read-only: changes go through GitOps or the API. */
export function ConfigurationView() {
  const [draft, setDraft] = useState('');
  const [actorId, setActorId] = useState<string | null>(null);
  return (
    <section aria-labelledby="config-title">
      <header class="view-header">
        <h1 id="config-title">Configuration</h1>
        <span class="muted">read-only</span>
      </header>
      <h2>Capabilities</h2>
      <Capabilities />
      <h2>Policies</h2>
      <Policies />
      <h2>Grants per actor</h2>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setActorId(draft.trim() || null);
        }}
      >
        <label>
          <span>Actor id</span>
          <input name="actor" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        </label>
        <div class="filter-actions">
          <button type="submit">Show grants</button>
        </div>
      </form>
      {actorId && <Grants actorId={actorId} />}
    </section>
  );
}
