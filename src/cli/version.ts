import { readFileSync } from 'node:fs';

/** The package version, read once from package.json next to dist/ and src/. */
export const VERSION: string = (() => {
  try {
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    return (JSON.parse(text) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
})();
