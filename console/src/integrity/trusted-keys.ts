/**
 * Verifier keys the user trusts for checkpoint signatures (the log's, witnesses'). Public
 * keys, not secrets: kept in localStorage so they outlive the tab. Trust comes from the
 * user pasting them from a source they trust, never from the server being checked.
 */
const KEY = 'arbiter.console.verifier-keys';

export function trustedKeyTexts(): string[] {
  return (localStorage.getItem(KEY) ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}

export function storeTrustedKeyTexts(lines: string[]): void {
  localStorage.setItem(KEY, lines.join('\n'));
}
