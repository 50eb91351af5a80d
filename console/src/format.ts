/** A duration for people: "42 s", "5 min 03 s", "2 h 05 min", "3 d 4 h". */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${String(seconds % 60).padStart(2, '0')} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ${String(minutes % 60).padStart(2, '0')} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

export function formatTime(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

export function formatJson(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** A hash shortened for a table cell; the full value goes into the title. */
export function shortHash(hash: string): string {
  return hash.length > 20 ? `${hash.slice(0, 19)}…` : hash;
}

/** A `datetime-local` value (local wall time) as the ISO instant the API takes. */
export function isoFromLocalInput(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
