export { Metrics } from './metrics.js';
export { instrumentAuditLog } from './instrumented-audit-log.js';
