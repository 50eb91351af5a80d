import { readFile } from 'node:fs/promises';
import type { AuditLog } from '../audit-log.js';

/** Shared by the archiving tests (not part of the public surface). */

/** `log` with some of its methods answered by `overrides`; the rest are the real log's. */
export function withOverrides(log: AuditLog, overrides: Partial<AuditLog>): AuditLog {
  return new Proxy(log, {
    get: (target, name, receiver): unknown =>
      name in overrides ? overrides[name as keyof AuditLog] : Reflect.get(target, name, receiver),
  });
}

/** `log`, answering queries with nothing past `lastSeq`: as if the rest were lost. */
export function answeringUpTo(log: AuditLog, lastSeq: number): AuditLog {
  return withOverrides(log, {
    query: async (query) => {
      const page = await log.query(query);
      return { ...page, entries: page.entries.filter((e) => e.seq <= lastSeq) };
    },
  });
}

/** The non-empty lines of a file. */
export async function linesOf(path: string): Promise<string[]> {
  return (await readFile(path, 'utf8')).split('\n').filter((l) => l !== '');
}
