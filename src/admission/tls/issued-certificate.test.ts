import { describe, expect, it } from 'vitest';
import { InvalidCertificateError } from './certificate-error.js';
import { validityWindow } from './issued-certificate.js';

describe('validityWindow', () => {
  it('accepts a validity of one second', () => {
    const now = new Date(Date.UTC(2030, 0, 1));
    expect(validityWindow(now, 1)).toStrictEqual({
      notBefore: now,
      notAfter: new Date(now.getTime() + 1000),
    });
  });

  it.each([0, -5, 1.5, Number.NaN])('refuses a validity of %s seconds, saying so', (seconds) => {
    const attempt = () => validityWindow(new Date(), seconds);
    expect(attempt).toThrow(InvalidCertificateError);
    expect(attempt).toThrow(`validitySeconds must be a positive integer, not ${seconds}`);
  });
});
