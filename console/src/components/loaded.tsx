import type { ComponentChildren } from 'preact';
import type { Fetched } from '../use-fetch.js';

export function ErrorNotice({ error }: { error: Error }) {
  return (
    <p class="notice error" role="alert">
      {error.message}
    </p>
  );
}

/** Shows the data once loaded, the error if the load failed, and "Loading…" meanwhile. */
export function Loaded<T>({
  fetched,
  children,
}: {
  fetched: Fetched<T>;
  children: (data: T) => ComponentChildren;
}) {
  if (fetched.error) return <ErrorNotice error={fetched.error} />;
  if (fetched.data === undefined) return <p aria-busy="true">Loading…</p>;
  return <>{children(fetched.data)}</>;
}
