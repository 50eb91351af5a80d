import type { Outcome } from '../api/types.js';

/** The outcome in words and colour (the words carry it; the colour only helps). */
export function OutcomeBadge({ outcome }: { outcome: Outcome | null }) {
  if (!outcome) return <span class="muted">—</span>;
  return <span class={`badge outcome-${outcome}`}>{outcome.replace('_', ' ')}</span>;
}

/** A review status: pending, approved, denied, expired, not required. */
export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge status-${status}`}>{status.replace('_', ' ')}</span>;
}
