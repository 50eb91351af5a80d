/** The logging the audit backend needs; a pino Logger fits. */
export interface AuditLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export const SILENT_LOGGER: AuditLogger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
