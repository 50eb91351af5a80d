/** The slice of a pino logger the audit log uses; pino's Logger satisfies it. */
export interface AuditLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export const silentLogger: AuditLogger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
