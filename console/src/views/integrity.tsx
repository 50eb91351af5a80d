import { useState } from 'preact/hooks';
import type { CheckpointView, VerifyReport } from '../api/types.js';
import { DataTable } from '../components/data-table.js';
import { Loaded } from '../components/loaded.js';
import { formatTime, shortHash } from '../format.js';
import {
  checkNoteSignatures,
  parseVerifierKey,
  type SignatureCheck,
} from '../integrity/verify-checkpoint-signature.js';
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

const STATUS_TEXT: Record<SignatureCheck['status'], string> = {
  signed: 'log signature verified',
  cosigned: 'witness cosignature verified',
  unverified: 'not verified',
  invalid: 'does NOT verify with your trusted key',
};

/**
 * The names a checkpoint's note is signed with, each as checked with the trusted keys:
 * a name no trusted key vouches for is only what the note claims.
 */
function CheckpointSignatures({ note, keyTexts }: { note: string; keyTexts: readonly string[] }) {
  const checks = useFetch(() => checkNoteSignatures(note, keyTexts), [note, keyTexts.join('\n')]);
  return (
    <td data-testid="signatures">
      <Loaded fetched={checks}>
        {(signatures) => (
          <ul class="signatures">
            {signatures.map((s, i) => (
              <li key={i} class={s.status}>
                {s.name}: {STATUS_TEXT[s.status]}
              </li>
            ))}
          </ul>
        )}
      </Loaded>
    </td>
  );
}

function Checkpoints({ keyTexts }: { keyTexts: readonly string[] }) {
  const { client } = useSession();
  const fetched = useFetch(
    () => client.get<{ checkpoints: CheckpointView[] }>('audit/checkpoints'),
    [client],
  );
  const signatures =
    keyTexts.length === 0
      ? 'Signatures (not verified: no key trusted)'
      : 'Signatures (checked with your trusted keys)';
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
            columns={['Seq', 'Time', 'Hash', signatures]}
          >
            {checkpoints.map((c) => (
              <tr key={c.seq}>
                <td class="number">{c.seq}</td>
                <td>{formatTime(c.time)}</td>
                <td>
                  <code class="hash" title={c.hash}>
                    {shortHash(c.hash)}
                  </code>
                </td>
                {c.note ? (
                  // Keyed by the keys: a new set of keys starts a new check, never showing the last one's result.
                  <CheckpointSignatures key={keyTexts.join('\n')} note={c.note} keyTexts={keyTexts} />
                ) : (
                  <td>unsigned</td>
                )}
              </tr>
            ))}
          </DataTable>
        )
      }
    </Loaded>
  );
}

/** The verifier keys the browser checks checkpoint signatures with. */
function TrustedKeys({ onSaved }: { onSaved: (lines: string[]) => void }) {
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
      onSaved(lines);
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
  const [keyTexts, setKeyTexts] = useState(trustedKeyTexts);
  return (
    <section aria-labelledby="integrity-title">
      <header class="view-header">
        <h1 id="integrity-title">Integrity</h1>
      </header>
      <h2>Chain verification</h2>
      <Verification />
      <h2>Checkpoints</h2>
      <Checkpoints keyTexts={keyTexts} />
      <h2>Trusted verifier keys</h2>
      <TrustedKeys onSaved={setKeyTexts} />
    </section>
  );
}
