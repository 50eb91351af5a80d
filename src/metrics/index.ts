export { Metrics, type ControllerObservations } from './metrics.js';
export { instrumentAuditLog } from './instrumented-audit-log.js';
