import type { ChainHead, Checkpoint } from '../audit-log.js';
import { LineChainVerifier, type LineVerifyReport } from '../export-verify.js';
import type { LogFile } from './log-file.js';
import { scanLines } from './log-scan.js';

/**
 * Verifies the log file from its first byte up to endBytes (the length the log had
 * committed when verification began) against every checkpoint. Beyond the chain itself,
 * the file must still be as long as the log wrote it and end at the head the log holds
 * in memory, so a consistent rewrite or a cut tail without a checkpoint is caught too.
 */
export async function verifyLogFile(
  file: LogFile,
  endBytes: number,
  expectedHead: ChainHead,
  checkpoints: readonly Checkpoint[],
  /** The retention anchor the file continues from, once entries were archived. */
  start?: ChainHead,
): Promise<LineVerifyReport> {
  const verifier = new LineChainVerifier({ checkpoints, start });
  let lineNumber = 0;
  let scannedBytes = 0;
  for await (const line of scanLines(file, endBytes)) {
    lineNumber += 1;
    verifier.pushLine(line.text, lineNumber);
    scannedBytes = line.offset + line.length + (line.terminated ? 1 : 0);
  }
  const report = verifier.finish();
  if (!report.ok) return report;
  if (scannedBytes < endBytes || report.head.seq < expectedHead.seq) {
    const reason = `the file ends at seq ${report.head.seq} (byte ${scannedBytes}) but the log wrote up to seq ${expectedHead.seq}: entries were truncated`;
    return { ...report, ok: false, break: { seq: report.head.seq + 1, reason } };
  }
  if (report.head.hash !== expectedHead.hash) {
    const reason = `the last entry's hash differs from the head this log wrote: the file was rewritten`;
    return { ...report, ok: false, break: { seq: report.head.seq, reason } };
  }
  return report;
}
