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
  const open = start === end || (start < end ? local >= start && local < end : local >= start || local < end);
  return open ? { kind: 'open' } : { kind: 'closed', localTime: formatMinutes(local) };
}

function localMinutes(clock: Intl.DateTimeFormat, now: Date): number {
  let hour = 0;
  let minute = 0;
  for (const part of clock.formatToParts(now)) {
    if (part.type === 'hour') hour = Number(part.value) % 24;
    if (part.type === 'minute') minute = Number(part.value);
  }
  return hour * 60 + minute;
}

function minutesOf(hhmm: string): number {
  const [h, m] = hhmm.split(':');
  return Number(h) * 60 + Number(m);
}

function formatMinutes(total: number): string {
  return `${String(Math.floor(total / 60)).padStart(2, '0')}:${String(total % 60).padStart(2, '0')}`;
}
