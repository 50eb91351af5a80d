import { describe, expect, it } from 'vitest';
import type { AuditEventInput } from './audit-log.js';
import { auditEventRefusal } from './event-check.js';
import { event } from './file/test-fixtures.js';

const refusal = (odd: Record<string, unknown>) => auditEventRefusal(odd as unknown as AuditEventInput);

describe('auditEventRefusal', () => {
  it('refuses nothing in an event every backend can store', () => {
    expect(auditEventRefusal(event())).toBeUndefined();
    expect(refusal({ ...event(), extra: { nested: [1, 'two', null] } })).toBeUndefined();
  });

  it('refuses a timestamp that does not parse, by its text', () => {
    expect(auditEventRefusal(event({ timestamp: 'yesterday' }))).toMatchObject({
      code: 'INTERNAL',
      message: 'audit event timestamp "yesterday" is not ISO 8601',
    });
  });

  it('refuses a member named hash, which the entry would store beside its own, unless it is left out', () => {
    expect(refusal({ ...event(), hash: 'sha256:chosen' })).toMatchObject({
      code: 'INTERNAL',
      message: 'audit event has a member named hash, which only its entry may have',
    });
    expect(refusal({ ...event(), hash: null })).toMatchObject({ code: 'INTERNAL' });
    expect(refusal({ ...event(), hash: undefined })).toBeUndefined();
  });

  it('refuses a value canonical JSON cannot hold, saying which', () => {
    expect(auditEventRefusal(event({ data: { amount: Number.POSITIVE_INFINITY } }))).toMatchObject({
      code: 'INTERNAL',
      message: 'TypeError: Infinity is not allowed in canonical JSON',
    });
    expect(auditEventRefusal(event({ data: { big: 1n } }))).toMatchObject({
      code: 'INTERNAL',
      message: 'TypeError: BigInt is not allowed in canonical JSON',
    });
  });
});
