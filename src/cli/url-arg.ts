/** The URL a flag's value names, or undefined when it is none (the caller says why). */
export function urlOf(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}
