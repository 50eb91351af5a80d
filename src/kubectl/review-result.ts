/** What approve and deny answer: the decision (decisionView) and, once, a confirmation token. */
export interface ReviewResult {
  decision_id: string;
  outcome: string;
  audit: { status: string };
  confirmation_token?: string;
}

/**
 * The outcome of a review. Approving a REQUIRE_CONFIRMATION yields a one-time token that
 * the server never shows again, so it gets its own labelled lines, printed this once.
 */
export function reviewResultText(result: ReviewResult): string {
  const done = `decision ${result.decision_id} (${result.outcome}) ${result.audit.status}\n`;
  if (!result.confirmation_token) return done;
  return (
    done +
    'Confirmation token (shown only this once; the agent re-proposes the same action with it\n' +
    'as context.confirmation_token, and it allows that action once):\n' +
    `${result.confirmation_token}\n`
  );
}
