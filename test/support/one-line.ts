/** One line on stderr, no stack trace: how a command reports an expected failure. */
export function isOneLine(stderr: string): boolean {
  return stderr.trimEnd().split('\n').length === 1 && !/^\s+at /m.test(stderr);
}
