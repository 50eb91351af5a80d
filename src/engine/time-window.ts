import { zoneClock } from '../index/index.js';
import type { TimeWindow } from '../model/index.js';

export type WindowVerdict =
  { kind: 'open' } | { kind: 'closed'; localTime: string } | { kind: 'unknown_zone' };

/**
 * Whether `now` falls in the window, on the wall clock of the window's IANA zone (so DST
 * moves the window with local time). `start` is inclusive, `end` exclusive, minute
 * resolution; start > end wraps midnight (22:00-06:00). start == end means the whole day:
 * an empty window would make the grant useless, which no author means.
 */
export function checkTimeWindow(window: TimeWindow, now: Date): WindowVerdict {
  const clock = zoneClock(window.timezone);
  if (!clock) return { kind: 'unknown_zone' };
  const local = localMinutes(clock, now);
  const start = minutesOf(window.start);
  const end = minutesOf(window.end);
  // start == end falls to the wrapping branch, where every minute is open.
  const open = start < end ? local >= start && local < end : local >= start || local < end;
  return open ? { kind: 'open' } : { kind: 'closed', localTime: formatMinutes(local) };
}

function localMinutes(clock: Intl.DateTimeFormat, now: Date): number {
  const parts = clock.formatToParts(now);
  const part = (type: 'hour' | 'minute') => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return (part('hour') % 24) * 60 + part('minute');
}

function minutesOf(hhmm: string): number {
  const [h, m] = hhmm.split(':');
  return Number(h) * 60 + Number(m);
}

function formatMinutes(total: number): string {
  return `${String(Math.floor(total / 60)).padStart(2, '0')}:${String(total % 60).padStart(2, '0')}`;
}
