import { ArbiterError } from '../model/index.js';
import type { AuditEntry, AuditEventInput, AuditQuery } from './audit-log.js';
import { entryNamespace } from './entry-namespace.js';

/**
 * The equality filters of an AuditQuery; each names an entry field of the same name, but
 * `namespace`, which is read from the actor id (entry-namespace.ts).
 */
export const EQUALITY_FILTERS = [
  'actor_id',
  'capability',
  'outcome',
  'decision_id',
  'event_type',
  'namespace',
] as const;
export type EqualityFilter = (typeof EQUALITY_FILTERS)[number];

/** The value an equality filter compares: the entry's field, or its namespace. */
export function filterValue(entry: AuditEventInput, field: EqualityFilter): string | null {
  return field === 'namespace' ? entryNamespace(entry) : entry[field];
}

/** Inclusive time bounds in epoch milliseconds; undefined means unbounded. */
export interface TimeBounds {
  sinceMs?: number;
  untilMs?: number;
}

function parseBound(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new ArbiterError('INVALID_REQUEST', `${name} is not an ISO 8601 timestamp`);
  return ms;
}

/** Parses since/until; timestamps are compared as instants, not as strings (offsets differ). */
export function timeBoundsOf(query: Pick<AuditQuery, 'since' | 'until'>): TimeBounds {
  const sinceMs = parseBound(query.since, 'since');
  const untilMs = parseBound(query.until, 'until');
  return { ...(sinceMs === undefined ? {} : { sinceMs }), ...(untilMs === undefined ? {} : { untilMs }) };
}

/** NaN (an unparsable timestamp) never satisfies a bound. */
export function withinTimeBounds(timeMs: number, bounds: TimeBounds): boolean {
  if (bounds.sinceMs === undefined && bounds.untilMs === undefined) return true;
  // Stryker disable next-line ConditionalExpression: NaN compares false with any bound, so the lines below return false for it too
  if (Number.isNaN(timeMs)) return false;
  return (
    (bounds.sinceMs === undefined || timeMs >= bounds.sinceMs) &&
    (bounds.untilMs === undefined || timeMs <= bounds.untilMs)
  );
}

/** The equality filters a query sets, as [field, value] pairs. */
export function equalityFiltersOf(query: AuditQuery): [EqualityFilter, string][] {
  return EQUALITY_FILTERS.flatMap((field) => {
    const value = query[field];
    return value === undefined ? [] : [[field, value] as [EqualityFilter, string]];
  });
}

/** Pure in-memory matcher of a query's filters (paging aside): the AND of all filters it sets. */
export function auditQueryMatcher(query: AuditQuery): (entry: AuditEntry) => boolean {
  const equalities = equalityFiltersOf(query);
  const bounds = timeBoundsOf(query);
  return (entry) =>
    equalities.every(([field, value]) => filterValue(entry, field) === value) &&
    withinTimeBounds(Date.parse(entry.timestamp), bounds);
}
