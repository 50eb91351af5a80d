import type { AuditEntry, AuditQuery } from '../audit-log.js';
import {
  EQUALITY_FILTERS,
  equalityFiltersOf,
  filterValue,
  timeBoundsOf,
  type EqualityFilter,
} from '../query-match.js';
import { listView, rangeView, type PositionView } from './position-view.js';
import { containsSorted, lowerBound, upperBound } from './sorted-search.js';
import { TimeIndex } from './time-index.js';

/** Where an entry's line lies in the file. */
export interface EntryLocation {
  seq: number;
  offset: number;
  length: number;
}

/** The outcome of planning a query: the page's positions, in query order. */
export interface QueryPlan {
  total: number;
  positions: number[];
  /** True when more entries match beyond the page. */
  more: boolean;
}

const EMPTY: readonly number[] = [];

/**
 * In-memory indexes over the entries of the log, by position (the entry's place in the
 * file, 0-based). Only locations and keys are held; entries themselves are read from the
 * file on demand, so memory grows by a few hundred bytes per entry.
 */
export class EntryIndex {
  private readonly seqs: number[] = [];
  private readonly offsets: number[] = [];
  private readonly lengths: number[] = [];
  private readonly byId = new Map<string, number>();
  private readonly byField = new Map<EqualityFilter, Map<string, number[]>>(
    EQUALITY_FILTERS.map((field) => [field, new Map()]),
  );
  private readonly time = new TimeIndex();

  get size(): number {
    return this.seqs.length;
  }

  add(entry: AuditEntry, offset: number, length: number): void {
    const position = this.seqs.length;
    this.seqs.push(entry.seq);
    this.offsets.push(offset);
    this.lengths.push(length);
    if (!this.byId.has(entry.id)) this.byId.set(entry.id, position);
    for (const [field, values] of this.byField) {
      const value = filterValue(entry, field);
      if (value === null) continue;
      const list = values.get(value);
      if (list) list.push(position);
      else values.set(value, [position]);
    }
    this.time.add(Date.parse(entry.timestamp));
  }

  location(position: number): EntryLocation {
    return { seq: this.seqs[position]!, offset: this.offsets[position]!, length: this.lengths[position]! };
  }

  positionOfId(id: string): number | undefined {
    return this.byId.get(id);
  }

  positionsOf(field: EqualityFilter, value: string): readonly number[] {
    return this.byField.get(field)!.get(value) ?? EMPTY;
  }

  /** Position of the entry with this seq; seqs ascend in an intact file. */
  positionOfSeq(seq: number): number | undefined {
    const direct = seq - 1;
    if (this.seqs[direct] === seq) return direct;
    const found = lowerBound(this.seqs, seq);
    return this.seqs[found] === seq ? found : undefined;
  }

  plan(query: AuditQuery): QueryPlan {
    const bounds = timeBoundsOf(query);
    const hasTime = bounds.sinceMs !== undefined || bounds.untilMs !== undefined;
    const { lo, hi } = this.time.candidates(bounds);
    const lists = equalityFiltersOf(query).map(([field, value]) => this.positionsOf(field, value));
    // Drive the scan by the smallest candidate list; the others are membership checks.
    const views = lists.map((list) => ({ list, view: listView(list, lo, hi) }));
    // Stryker disable next-line MethodExpression,ArithmeticOperator: the driver sets how many positions are scanned, not which match
    views.sort((a, b) => a.view.length - b.view.length);
    const [driver, ...others] = views;
    const source = driver?.view ?? rangeView(lo, hi);
    const matches = (p: number): boolean =>
      (!hasTime || this.time.matches(p, bounds)) && others.every(({ list }) => containsSorted(list, p));

    let total: number;
    if (others.length === 0) {
      // Only anomalous timestamps can miss inside the source: count them, not the range.
      const misses = hasTime ? this.time.misses(lo, hi, bounds) : [];
      total = source.length - misses.filter((p) => !driver || containsSorted(driver.list, p)).length;
    } else {
      total = 0;
      for (let k = 0; k < source.length; k += 1) if (matches(source.at(k))) total += 1;
    }
    return { total, ...this.page(source, matches, query) };
  }

  private page(
    source: PositionView,
    matches: (p: number) => boolean,
    query: AuditQuery,
  ): { positions: number[]; more: boolean } {
    const positions: number[] = [];
    if (query.limit <= 0) return { positions, more: false };
    const ascending = query.order === 'asc';
    const after = query.after;
    // Bounds on view indexes from the exclusive seq cursor.
    const first = ascending && after !== undefined ? source.countBelow(upperBound(this.seqs, after)) : 0;
    const last =
      !ascending && after !== undefined ? source.countBelow(lowerBound(this.seqs, after)) : source.length;
    const step = ascending ? 1 : -1;
    for (let k = ascending ? first : last - 1; k >= first && k < last; k += step) {
      const p = source.at(k);
      if (!matches(p)) continue;
      if (positions.length === query.limit) return { positions, more: true };
      positions.push(p);
    }
    return { positions, more: false };
  }
}
