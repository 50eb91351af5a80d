/**
 * A duration as kubectl prints ages (`45s`, `3m20s`, `42m`, `5h10m`, `2d4h`): precise
 * while it is short, coarser as it grows. Negative durations print as `0s`.
 */
export function humanDuration(milliseconds: number): string {
  const seconds = Math.max(0, Math.floor(milliseconds / 1000));
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return withRemainder(minutes, 'm', seconds % 60, 's');
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return withRemainder(hours, 'h', minutes % 60, 'm');
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (days < 8) return withRemainder(days, 'd', hours % 24, 'h');
  return `${days}d`;
}

function withRemainder(whole: number, unit: string, remainder: number, remainderUnit: string): string {
  return remainder === 0 ? `${whole}${unit}` : `${whole}${unit}${remainder}${remainderUnit}`;
}
