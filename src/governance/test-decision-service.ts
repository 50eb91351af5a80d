import type { FileAuditLog } from '../audit/file/file-audit-log.js';
import { openLog, tempDir } from '../audit/file/test-fixtures.js';
import { MemoryRateLimiter, resolveEngineSettings } from '../engine/index.js';
import type { IndexSnapshot } from '../index/index.js';
import { MemoryOneTimeUses } from '../one-time-uses/index.js';
import { DecisionService, type DecisionServiceDeps } from './decision-service.js';

/** Shared by the governance tests (not part of the public surface). */

export interface ServiceOnTempLog {
  service: DecisionService;
  log: FileAuditLog;
  /** The log's folder (audit.jsonl). */
  dir: string;
  /** Closes the log and removes its folder. */
  close: () => Promise<void>;
}

/** A DecisionService over a file audit log in a fresh temp folder, pending 600 s by default. */
export async function serviceOnTempLog(
  snapshot: () => IndexSnapshot,
  clock: () => Date,
  overrides: Partial<DecisionServiceDeps> = {},
): Promise<ServiceOnTempLog> {
  const temp = await tempDir();
  const log = await openLog(temp.dir);
  const service = new DecisionService({
    index: { current: snapshot },
    audit: log,
    limiter: new MemoryRateLimiter(),
    settings: resolveEngineSettings(),
    clock,
    pendingTtlSeconds: 600,
    uses: new MemoryOneTimeUses(clock),
    ...overrides,
  });
  return {
    service,
    log,
    dir: temp.dir,
    close: async () => {
      await log.close();
      await temp.cleanup();
    },
  };
}
