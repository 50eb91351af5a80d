const formatters = new Map<string, Intl.DateTimeFormat | null>();
const MAX_CACHED_ZONES = 1024;

/**
 * A formatter giving the wall-clock hour and minute in an IANA zone, or null when the
 * runtime does not know the zone. Cached: building Intl formatters is slow.
 */
export function zoneClock(timeZone: string): Intl.DateTimeFormat | null {
  const cached = formatters.get(timeZone);
  if (cached !== undefined) return cached;
  let formatter: Intl.DateTimeFormat | null;
  try {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
  } catch {
    formatter = null;
  }
  if (formatters.size >= MAX_CACHED_ZONES) formatters.clear();
  formatters.set(timeZone, formatter);
  return formatter;
}

export function isKnownTimeZone(timeZone: string): boolean {
  return zoneClock(timeZone) !== null;
}
