export { openRedisAuditLog, RedisAuditLog, type RedisAuditLogOptions } from './redis-audit-log.js';
export { AuditAppendInDoubtError } from './errors.js';
export { DEFAULT_KEY_PREFIX, RedisAuditKeys } from './redis-keys.js';
export type { AuditLogger } from '../audit-logger.js';
