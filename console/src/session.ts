/** The credential lives in sessionStorage only: gone when the tab closes, never on disk. */
const KEY = 'arbiter.console.credential';

export function storedCredential(): string | null {
  return sessionStorage.getItem(KEY);
}

export function storeCredential(credential: string): void {
  sessionStorage.setItem(KEY, credential);
}

export function forgetCredential(): void {
  sessionStorage.removeItem(KEY);
}
