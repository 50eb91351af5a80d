import type { Notification } from './notification.js';

/** Slack's mrkdwn escapes: only these three characters are markup. */
function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const HEADLINES: Record<Notification['type'], string> = {
  'decision.pending': 'waits for review',
  'decision.approved': 'was approved',
  'decision.denied': 'was denied',
  'decision.expired': 'expired unreviewed',
  'audit.chain_broken': 'verification failed',
};

/**
 * A Slack incoming-webhook message (text for notifications, blocks for the channel):
 * the decision, the reason, the expiry, and for a pending one the commands that review it.
 */
export function slackMessage(n: Notification): { text: string; blocks: unknown[] } {
  const subject =
    n.type === 'audit.chain_broken'
      ? 'Arbiter audit chain'
      : `Arbiter decision ${n.decision_id ?? ''} (${n.outcome ?? ''}, ${n.capability ?? ''} by ${n.actor_id ?? ''})`;
  const text = `${subject} ${HEADLINES[n.type]}`;
  const fields = [
    ['Actor', n.actor_id],
    ['Capability', n.capability],
    ['Outcome', n.outcome],
    ['Risk', n.risk_score === null ? null : String(n.risk_score)],
    ['Expires', n.expires_at],
    ['Reviewer', n.reviewer],
  ].filter((f): f is [string, string] => f[1] !== null);
  const blocks: unknown[] = [
    { type: 'section', text: { type: 'mrkdwn', text: `*${escape(text)}*` } },
    ...(n.reason === null
      ? []
      : [{ type: 'section', text: { type: 'mrkdwn', text: `*Reason:* ${escape(n.reason)}` } }]),
  ];
  if (fields.length > 0)
    blocks.push({
      type: 'section',
      fields: fields.map(([name, value]) => ({ type: 'mrkdwn', text: `*${name}:* ${escape(value)}` })),
    });
  if (n.type === 'decision.pending' && n.decision_id !== null)
    blocks.push({
      type: 'section',
      text: {
        type: 'mrkdwn',
        text:
          `Approve: \`kubectl arbiter approve ${escape(n.decision_id)}\`\n` +
          `Deny: \`kubectl arbiter deny ${escape(n.decision_id)}\``,
      },
    });
  blocks.push({
    type: 'context',
    elements: [{ type: 'mrkdwn', text: `${n.type} · ${escape(n.timestamp)}` }],
  });
  return { text, blocks };
}
