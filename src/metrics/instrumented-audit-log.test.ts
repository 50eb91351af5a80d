import { describe, expect, it } from 'vitest';
import type { AuditEntry, AuditEventInput, AuditLog } from '../audit/audit-log.js';
import { instrumentAuditLog } from './instrumented-audit-log.js';
import { Metrics } from './metrics.js';

const event = { event_type: 'governance.decision' } as AuditEventInput;

describe('instrumentAuditLog', () => {
  it('times every append, counts the failed ones, and passes on results and errors as they are', async () => {
    const metrics = new Metrics();
    const stored = { id: 'e-1' } as AuditEntry;
    const failure = new Error('disk full');
    let fail = false;
    const backend = {
      append: () => (fail ? Promise.reject(failure) : Promise.resolve(stored)),
    } as unknown as AuditLog;
    const audit = instrumentAuditLog(backend, metrics);
    await expect(audit.append(event)).resolves.toBe(stored);
    fail = true;
    await expect(audit.append(event)).rejects.toBe(failure);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^arbiter_audit_append_duration_seconds_count 2$/m);
    expect(text).toMatch(/^arbiter_audit_append_failures_total 1$/m);
  });
});
