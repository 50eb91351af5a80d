export {
  AUDIT_LOG_FILE,
  FileAuditLog,
  openFileAuditLog,
  type FileAuditLogOptions,
} from './file-audit-log.js';
export {
  CHECKPOINTS_FILE,
  FileCheckpointStore,
  type FileCheckpointStoreOptions,
} from './checkpoint-store.js';
export type { CheckpointEvery } from './checkpointer.js';
export type { AuditLogger } from '../audit-logger.js';
export type { LogFile, OpenLogFile } from './log-file.js';
export { openLogFile } from './log-file.js';
