/** GET /audit/verify (VerifyReport in src/audit/audit-log.ts). */
export interface VerifyReportView {
  ok: boolean;
  entries_checked: number;
  head: { seq: number; hash: string };
  break?: { seq: number; entry_id?: string; reason: string };
  checkpoints_checked: number;
}

/** `kubectl arbiter verify`: one line saying whether the chain holds, and where it breaks. */
export function verifyReportLine(report: VerifyReportView): string {
  if (report.ok) {
    return (
      `ok: the audit chain holds: ${report.entries_checked} entries checked, head seq ` +
      `${report.head.seq} (${report.head.hash}), ${report.checkpoints_checked} checkpoints checked\n`
    );
  }
  const where = report.break
    ? `at seq ${report.break.seq}${report.break.entry_id ? ` (${report.break.entry_id})` : ''}: ${report.break.reason}`
    : 'without saying where';
  return `BROKEN: the audit chain does not hold ${where}\n`;
}
