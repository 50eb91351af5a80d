import { useState } from 'preact/hooks';

/**
 * The one-time confirmation token of an approved REQUIRE_CONFIRMATION decision. The API
 * returns it once, so it is shown here once, with a copy button, until dismissed.
 */
export function ConfirmationToken({
  token,
  decisionId,
  onDismiss,
}: {
  token: string;
  decisionId: string;
  onDismiss: () => void;
}) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = () =>
    navigator.clipboard.writeText(token).then(
      () => setCopied('Copied'),
      () => setCopied('Copy failed: select the token and copy it by hand'),
    );
  return (
    <section class="notice token" aria-labelledby="token-title">
      <h2 id="token-title">Confirmation token</h2>
      <p>
        Approved decision <code>{decisionId}</code>. The agent re-proposes with this token in{' '}
        <code>context.confirmation_token</code>. It is shown only now.
      </p>
      <p class="token-row">
        <code class="token-value" data-testid="confirmation-token">
          {token}
        </code>
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
        <span role="status">{copied}</span>
      </p>
      <button type="button" class="secondary" onClick={onDismiss}>
        Dismiss
      </button>
    </section>
  );
}
