import { describe, expect, it } from 'vitest';
import { createCertificateAuthority } from './certificate-authority.js';
import { InvalidCertificateError } from './certificate-error.js';
import { certificateDates, certificateText, publicKeys, verify } from './test-fixtures.js';

describe('createCertificateAuthority (checked with the openssl command line)', () => {
  it('makes a self-signed P-256 CA that openssl accepts as a CA', async () => {
    const ca = await createCertificateAuthority({
      commonName: 'test-ca',
      now: new Date(),
      validitySeconds: 3600,
    });

    expect(ca.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(ca.certPem).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
    expect((await verify(ca.certPem, ca.certPem)).stdout).toContain('cert.pem: OK');
    const text = await certificateText(ca.certPem);
    expect(text).toContain('Subject: CN = test-ca');
    expect(text).toContain('Issuer: CN = test-ca');
    expect(text).toContain('Signature Algorithm: ecdsa-with-SHA256');
    expect(text).toContain('ASN1 OID: prime256v1');
    expect(text).toMatch(/X509v3 Basic Constraints: critical\n\s+CA:TRUE, pathlen:0/);
    expect(text).toMatch(/X509v3 Key Usage: critical\n\s+Certificate Sign, CRL Sign\n/);
    expect(text).toContain('X509v3 Subject Key Identifier:');
    const keys = await publicKeys(ca.certPem, ca.keyPem);
    expect(keys.ofKey).toBe(keys.ofCert);
  });

  it('backdates notBefore by a minute and encodes whole seconds', async () => {
    const now = new Date('2030-01-01T00:00:00.750Z');
    const ca = await createCertificateAuthority({ commonName: 'ca', now, validitySeconds: 86_400 });

    expect(ca.notBefore.toISOString()).toBe('2029-12-31T23:59:00.000Z');
    expect(ca.notAfter.toISOString()).toBe('2030-01-02T00:00:00.000Z');
    expect(await certificateDates(ca.certPem)).toEqual({ notBefore: ca.notBefore, notAfter: ca.notAfter });
  });

  it('backdates a seconds-long lifetime by a tenth of it at most', async () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const ca = await createCertificateAuthority({ commonName: 'ca', now, validitySeconds: 30 });

    expect(ca.notBefore.toISOString()).toBe('2029-12-31T23:59:57.000Z');
    expect(ca.notAfter.toISOString()).toBe('2030-01-01T00:00:30.000Z');
  });

  it.each(['a, CN=b+O="c"', '', 'x'.repeat(65), 'a\\0a'])(
    'refuses the common name %j',
    async (commonName) => {
      await expect(
        createCertificateAuthority({ commonName, now: new Date(), validitySeconds: 60 }),
      ).rejects.toThrow(/a common name must be 1 to 64 of/);
    },
  );

  it.each([0, -1, 1.5, Number.NaN])('refuses a validity of %s seconds', async (validitySeconds) => {
    await expect(
      createCertificateAuthority({ commonName: 'ca', now: new Date(), validitySeconds }),
    ).rejects.toThrow(InvalidCertificateError);
  });
});
