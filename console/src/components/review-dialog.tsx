import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import type { DecisionView } from '../api/types.js';
import { useSession } from '../session-context.js';

type Action = 'approve' | 'deny';

/**
 * Approve and Deny for one pending decision, each confirmed in a modal dialog with an
 * optional comment (Escape cancels; focus returns to the button).
 */
export function ReviewButtons({
  decision,
  onReviewed,
}: {
  decision: Pick<DecisionView, 'decision_id' | 'audit'>;
  onReviewed: (result: DecisionView) => void;
}) {
  const [action, setAction] = useState<Action | null>(null);
  const what = `${decision.audit.capability} by ${decision.audit.actor_id}`;
  return (
    <div class="review-buttons">
      <button
        type="button"
        class="approve"
        aria-label={`Approve ${what}`}
        onClick={() => setAction('approve')}
      >
        Approve
      </button>
      <button type="button" class="deny" aria-label={`Deny ${what}`} onClick={() => setAction('deny')}>
        Deny
      </button>
      {action && (
        <ReviewDialog
          action={action}
          decision={decision}
          onClose={() => setAction(null)}
          onReviewed={(result) => {
            setAction(null);
            onReviewed(result);
          }}
        />
      )}
    </div>
  );
}

function ReviewDialog({
  action,
  decision,
  onClose,
  onReviewed,
}: {
  action: Action;
  decision: Pick<DecisionView, 'decision_id' | 'audit'>;
  onClose: () => void;
  onReviewed: (result: DecisionView) => void;
}) {
  const { client } = useSession();
  const dialog = useRef<HTMLDialogElement>(null);
  const [comment, setComment] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => dialog.current?.showModal(), []);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const body = comment.trim() ? { comment: comment.trim() } : {};
      onReviewed(
        await client.post<DecisionView>(
          `governance/decisions/${encodeURIComponent(decision.decision_id)}/${action}`,
          body,
        ),
      );
    } catch (err) {
      setError(err instanceof ApiError ? `${err.code}: ${err.message}` : String(err));
      setBusy(false);
    }
  };
  const verb = action === 'approve' ? 'Approve' : 'Deny';
  return (
    <dialog ref={dialog} onClose={onClose} aria-labelledby="review-title">
      <form onSubmit={(e) => void submit(e)}>
        <h2 id="review-title">
          {verb} {decision.audit.capability}
        </h2>
        <p>
          Actor <strong>{decision.audit.actor_id}</strong>, decision <code>{decision.decision_id}</code>
        </p>
        <label>
          <span>Comment (optional)</span>
          <textarea
            name="comment"
            rows={3}
            maxLength={1000}
            value={comment}
            onInput={(e) => setComment(e.currentTarget.value)}
          />
        </label>
        {error && (
          <p class="notice error" role="alert">
            {error}
          </p>
        )}
        <div class="dialog-actions">
          <button type="submit" class={action} disabled={busy}>
            {verb}
          </button>
          <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
