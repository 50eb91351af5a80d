import { describe, expect, it } from 'vitest';
import { checkTimeWindow } from './time-window.js';

const window = (start: string, end: string, timezone = 'Europe/Berlin') => ({ start, end, timezone });

describe('checkTimeWindow', () => {
  it.each([
    // Berlin is UTC+1 in winter, UTC+2 in summer.
    ['inside, winter', window('09:00', '17:00'), '2024-01-15T08:00:00Z', 'open'],
    ['before start, winter', window('09:00', '17:00'), '2024-01-15T07:59:00Z', 'closed'],
    ['end is exclusive', window('09:00', '17:00'), '2024-01-15T16:00:00Z', 'closed'],
    ['last minute is inside', window('09:00', '17:00'), '2024-01-15T15:59:59Z', 'open'],
    ['same UTC time is inside in summer (DST)', window('09:00', '17:00'), '2024-07-15T07:00:00Z', 'open'],
    ['same UTC time is outside in winter', window('09:00', '17:00'), '2024-01-15T07:00:00Z', 'closed'],
    ['day of the spring DST change', window('09:00', '17:00'), '2024-03-31T07:30:00Z', 'open'],
    ['day of the autumn DST change', window('09:00', '17:00'), '2024-10-27T07:30:00Z', 'closed'],
    ['wrap: late evening', window('22:00', '06:00'), '2024-01-15T22:30:00Z', 'open'],
    ['wrap: after midnight', window('22:00', '06:00'), '2024-01-16T04:59:00Z', 'open'],
    ['wrap: end exclusive', window('22:00', '06:00'), '2024-01-16T05:00:00Z', 'closed'],
    ['wrap: midday is outside', window('22:00', '06:00'), '2024-01-15T11:00:00Z', 'closed'],
    ['start == end is all day', window('08:00', '08:00'), '2024-01-15T03:17:00Z', 'open'],
    ['midnight start', window('00:00', '01:00'), '2024-01-14T23:30:00Z', 'open'],
    ['UTC zone', window('09:00', '17:00', 'UTC'), '2024-01-15T09:00:00Z', 'open'],
    ['wrap: opens at its start minute', window('22:00', '06:00', 'UTC'), '2024-01-15T22:00:00Z', 'open'],
    ['wrap: the minute before start', window('22:00', '06:00', 'UTC'), '2024-01-15T21:59:00Z', 'closed'],
    ['midnight to midnight is all day', window('00:00', '00:00', 'UTC'), '2024-01-15T23:59:00Z', 'open'],
    ['minutes count, not only hours', window('09:30', '10:00', 'UTC'), '2024-01-15T09:29:00Z', 'closed'],
    [
      'half-hour offset (Kolkata +05:30)',
      window('09:00', '10:00', 'Asia/Kolkata'),
      '2024-01-15T03:30:00Z',
      'open',
    ],
    [
      'southern DST (Sydney, +11 in January)',
      window('09:00', '17:00', 'Australia/Sydney'),
      '2024-01-15T22:30:00Z',
      'open',
    ],
    [
      'southern winter (Sydney, +10 in July)',
      window('09:00', '17:00', 'Australia/Sydney'),
      '2024-07-15T22:30:00Z',
      'closed',
    ],
    [
      'New York in the DST gap hour',
      window('02:00', '03:00', 'America/New_York'),
      '2024-03-10T07:30:00Z',
      'closed',
    ],
  ])('%s', (_, w, iso, expected) => {
    expect(checkTimeWindow(w, new Date(iso)).kind).toBe(expected);
  });

  it('reports the local time when closed', () => {
    expect(checkTimeWindow(window('09:00', '17:00'), new Date('2024-01-15T17:45:00Z'))).toEqual({
      kind: 'closed',
      localTime: '18:45',
    });
    // Two digits each for hour and minute.
    expect(checkTimeWindow(window('09:00', '17:00', 'UTC'), new Date('2024-01-15T08:05:00Z'))).toEqual({
      kind: 'closed',
      localTime: '08:05',
    });
  });

  it('fails closed on an unknown time zone', () => {
    expect(checkTimeWindow(window('00:00', '00:00', 'Nowhere/Land'), new Date(0)).kind).toBe('unknown_zone');
  });
});
