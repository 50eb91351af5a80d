import { formatJson } from '../format.js';

/** A value as indented JSON in a labelled, scrollable, focusable block. */
export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return (
    <pre class="json" tabIndex={0} aria-label={label}>
      {formatJson(value)}
    </pre>
  );
}
