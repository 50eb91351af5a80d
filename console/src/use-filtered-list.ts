import { useMemo, useState } from 'preact/hooks';
import type { Query } from './api/client.js';
import { useCursorPages } from './components/pager.js';
import type { FilterValues } from './components/filter-form.js';
import { isoFromLocalInput } from './format.js';
import { useFetch } from './use-fetch.js';

/** The filters as the API's query: times from the local wall clock to ISO instants. */
export function queryOf(filters: FilterValues): Query {
  return {
    ...filters,
    since: isoFromLocalInput(filters.since ?? ''),
    until: isoFromLocalInput(filters.until ?? ''),
  };
}

/**
 * A filtered, cursor-paged list: `load(query, cursor)` fetches one page; applying new
 * filters starts again at the first page.
 */
export function useFilteredList<T>(
  load: (query: Query, cursor: string | undefined) => Promise<T>,
  inputs: readonly unknown[],
) {
  const [filters, setFilters] = useState<FilterValues>({});
  const pages = useCursorPages();
  const query = useMemo(() => queryOf(filters), [filters]);
  const fetched = useFetch(() => load(query, pages.cursor), [...inputs, query, pages.cursor]);
  const apply = (values: FilterValues) => {
    setFilters(values);
    pages.first();
  };
  return { filters, apply, query, pages, fetched };
}
