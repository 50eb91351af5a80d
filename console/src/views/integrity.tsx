import { useState } from 'preact/hooks';
import type { CheckpointView, VerifyReport } from '../api/types.js';
import { DataTable } from '../components/data-table.js';
import { Loaded } from '../components/loaded.js';
import { formatTime, shortHash } from '../format.js';
import { parseSignedCheckpoint } from '../integrity/checkpoint-note.js';
import { parseVerifierKey } from '../integrity/verify-checkpoint-signature.js';
import { storeTrustedKeyTexts, trustedKeyTexts } from '../integrity/trusted-keys.js';
import { useSession } from '../session-context.js';
import { useFetch } from '../use-fetch.js';

function Verification() {
  const { client } = useSession();
  const fetched = useFetch(
    async () => ({ report: await client.get<VerifyReport>('audit/verify'), at: new Date().toISOString() }),
    [client],
  );
  return (
    <Loaded fetched={fetched}>
      {({ report, at }) => (
        <div class={`notice ${report.ok ? 'ok' : 'error'}`} data-testid="verify-result">
          <p>
            <strong>{report.ok ? 'The chain holds.' : 'The chain is BROKEN.'}</strong> Verified at{' '}
            {formatTime(at)}: {report.entries_checked} entries and {report.checkpoints_checked} checkpoints
            checked; head seq {report.head.seq} <code class="hash">{shortHash(report.head.hash)}</code>.
          </p>
          {report.break && (
            <p>
              First break at seq {report.break.seq}: {report.break.reason}
            </p>
          )}
          <button type="button" onClick={fetched.reload} disabled={fetched.loading}>
            Verify again
          </button>
        </div>
      )}
    </Loaded>
  );
}

/** The signers of a checkpoint's note: the log first, then the witnesses that cosigned it. */
function signersOf(note: string): { log: string; witnesses: string[] } {
  try {
    const [log, ...witnesses] = parseSignedCheckpoint(note).signatures.map((s) => s.name);
    return { log: log ?? '—', witnesses };
  } catch {
    return { log: 'unreadable note', witnesses: [] };
  }
}

function Checkpoints() {
  const { client } = useSession();
  const fetched = useFetch(
    () => client.get<{ checkpoints: CheckpointView[] }>('audit/checkpoints'),
    [client],
  );
  return (
    <Loaded fetched={fetched}>
      {({ checkpoints }) =>
        checkpoints.length === 0 ? (
          <p class="empty">
            No checkpoint yet (one is taken every --checkpoint-entries entries or --checkpoint-seconds).
          </p>
        ) : (
          <DataTable
            caption="Checkpoints of the chain head, newest first"
            columns={['Seq', 'Time', 'Hash', 'Signed by', 'Witness cosignatures']}
          >
            {checkpoints.map((c) => {
              const signers = c.note ? signersOf(c.note) : null;
              return (
                <tr key={c.seq}>
                  <td class="number">{c.seq}</td>
                  <td>{formatTime(c.time)}</td>
                  <td>
                    <code class="hash" title={c.hash}>
                      {shortHash(c.hash)}
                    </code>
                  </td>
                  <td>{signers ? signers.log : 'unsigned'}</td>
                  <td>{signers ? signers.witnesses.join(', ') || 'none' : '—'}</td>
                </tr>
              );
            })}
          </DataTable>
        )
      }
    </Loaded>
  );
}

/** The verifier keys the browser checks checkpoint signatures with. */
function TrustedKeys() {
  const [text, setText] = useState(trustedKeyTexts().join('\n'));
  const [message, setMessage] = useState<string | null>(null);
  const save = async (e: Event) => {
    e.preventDefault();
    const lines = text
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    try {
      await Promise.all(lines.map(parseVerifierKey));
      storeTrustedKeyTexts(lines);
      setMessage(`Saved ${lines.length} key(s) in this browser.`);
    } catch (err) {
      setMessage((err as Error).message);
    }
  };
  return (
    <form class="keys" onSubmit={(e) => void save(e)}>
      <label>
        <span>
          Verifier keys you trust (the log's and witnesses', one per line, as printed by arbiter audit keygen)
        </span>
        <textarea
          name="verifier-keys"
          rows={3}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
      </label>
      <button type="submit">Save keys</button> <span role="status">{message}</span>
    </form>
  );
}

export function IntegrityView() {
  return (
    <section aria-labelledby="integrity-title">
      <header class="view-header">
        <h1 id="integrity-title">Integrity</h1>
      </header>
      <h2>Chain verification</h2>
      <Verification />
      <h2>Checkpoints</h2>
      <Checkpoints />
      <h2>Trusted verifier keys</h2>
      <TrustedKeys />
    </section>
  );
}
