import { useState } from 'preact/hooks';

/**
 * Cursor paging as the API has it: a page is named by the cursor that leads to it, so
 * going back is a stack of the cursors already followed.
 */
export function useCursorPages() {
  const [stack, setStack] = useState<(string | undefined)[]>([undefined]);
  return {
    cursor: stack.at(-1),
    page: stack.length,
    next: (cursor: string) => setStack((s) => [...s, cursor]),
    previous: () => setStack((s) => (s.length > 1 ? s.slice(0, -1) : s)),
    first: () => setStack([undefined]),
  };
}

export type CursorPages = ReturnType<typeof useCursorPages>;

export function Pager({
  pages,
  nextCursor,
  total,
  shown,
}: {
  pages: CursorPages;
  nextCursor: string | null;
  total: number;
  shown: number;
}) {
  return (
    <nav class="pager" aria-label="Pages">
      <span>
        Page {pages.page} · {shown} shown of {total}
      </span>
      <button type="button" class="secondary" disabled={pages.page === 1} onClick={pages.first}>
        First
      </button>
      <button type="button" class="secondary" disabled={pages.page === 1} onClick={pages.previous}>
        Previous
      </button>
      <button
        type="button"
        class="secondary"
        disabled={nextCursor === null}
        onClick={() => nextCursor && pages.next(nextCursor)}
      >
        Next
      </button>
    </nav>
  );
}
