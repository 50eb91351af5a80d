import { describe, expect, it } from 'vitest';
import { InvalidCertificateError, invalidCertificate } from './certificate-error.js';

describe('InvalidCertificateError', () => {
  it('names itself, so logs and stack traces say what failed', () => {
    const error = new InvalidCertificateError('the CA expired');
    expect(error.name).toBe('InvalidCertificateError');
    expect(String(error)).toBe('InvalidCertificateError: the CA expired');
  });

  it('carries the parser message and the cause', () => {
    const cause = new Error('bad tag');
    const error = invalidCertificate('the CA certificate', cause);
    expect(error.message).toBe('the CA certificate: bad tag');
    expect(error.cause).toBe(cause);
  });
});
