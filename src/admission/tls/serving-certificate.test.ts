import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCertificateAuthority } from './certificate-authority.js';
import { InvalidCertificateError } from './certificate-error.js';
import { issueServingCertificate } from './serving-certificate.js';
import { certificateDates, certificateText, publicKeys, verify } from './test-fixtures.js';
import { subtle, x509 } from './x509.js';

const names = {
  dnsNames: ['arbiter', 'arbiter.arbiter-system', 'arbiter.arbiter-system.svc'],
  ipAddresses: ['127.0.0.1', '::1'],
};

async function newCa(now = new Date(), validitySeconds = 3600) {
  return createCertificateAuthority({ commonName: 'test-ca', now, validitySeconds });
}

/** A CA whose key is on P-384, not the P-256 Arbiter signs with. */
async function p384Ca(): Promise<{ certPem: string; keyPem: string }> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'secp384r1' });
  const algorithm = { name: 'ECDSA', namedCurve: 'P-384' };
  const der = (key: typeof privateKey, type: 'pkcs8' | 'spki') => key.export({ format: 'der', type });
  const keys = {
    privateKey: await subtle.importKey('pkcs8', der(privateKey, 'pkcs8'), algorithm, false, ['sign']),
    publicKey: await subtle.importKey('spki', der(publicKey, 'spki'), algorithm, true, ['verify']),
  };
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=p384-ca',
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 3_600_000),
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-384' },
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
  });
  return {
    certPem: cert.toString('pem'),
    keyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  };
}

describe('issueServingCertificate (checked with the openssl command line)', () => {
  it('issues a server certificate that openssl verifies against the CA', async () => {
    const ca = await newCa();
    const cert = await issueServingCertificate(ca, { ...names, now: new Date(), validitySeconds: 600 });

    const verified = await verify(ca.certPem, cert.certPem, { purpose: 'sslserver' });
    expect(verified.stdout).toContain('cert.pem: OK');
    const keys = await publicKeys(cert.certPem, cert.keyPem);
    expect(keys.ofKey).toBe(keys.ofCert);
    expect(cert.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
  });

  it('carries the SANs, CA:FALSE, serverAuth and the CA key identifier', async () => {
    const ca = await newCa();
    const cert = await issueServingCertificate(ca, { ...names, now: new Date(), validitySeconds: 600 });

    const text = await certificateText(cert.certPem);
    expect(text).toContain(
      'DNS:arbiter, DNS:arbiter.arbiter-system, DNS:arbiter.arbiter-system.svc, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1',
    );
    expect(text).toMatch(/X509v3 Basic Constraints: critical\n\s+CA:FALSE/);
    expect(text).toMatch(/X509v3 Key Usage: critical\n\s+Digital Signature, Key Encipherment\n/);
    expect(text).toMatch(/X509v3 Extended Key Usage: \n\s+TLS Web Server Authentication\n/);
    expect(text).toContain('Subject: CN = arbiter\n');
    expect(text).toContain('Issuer: CN = test-ca\n');
    const caKeyId = /Subject Key Identifier: \n\s+(\S+)/.exec(await certificateText(ca.certPem))![1];
    expect(/Authority Key Identifier: \n\s+(?:keyid:)?(\S+)/.exec(text)![1]).toBe(caKeyId);
  });

  it('is refused by openssl against another CA', async () => {
    const [ca, other] = await Promise.all([newCa(), newCa()]);
    const cert = await issueServingCertificate(ca, { ...names, now: new Date(), validitySeconds: 600 });

    const verified = await verify(other.certPem, cert.certPem);
    expect(verified.code).not.toBe(0);
    expect(verified.stderr + verified.stdout).toMatch(
      /unable to get local issuer certificate|signature failure/,
    );
  });

  it('backdates notBefore and ends with its validity', async () => {
    const now = new Date('2030-06-01T12:00:00.400Z');
    const ca = await newCa(now, 86_400);
    const cert = await issueServingCertificate(ca, { ...names, now, validitySeconds: 3600 });

    expect(cert.notBefore.toISOString()).toBe('2030-06-01T11:59:00.000Z');
    expect(cert.notAfter.toISOString()).toBe('2030-06-01T13:00:00.000Z');
    expect(await certificateDates(cert.certPem)).toEqual({
      notBefore: cert.notBefore,
      notAfter: cert.notAfter,
    });
    expect((await verify(ca.certPem, cert.certPem, { at: new Date('2030-06-01T12:30:00Z') })).code).toBe(0);
  });

  it('never outlives its CA', async () => {
    const now = new Date('2030-06-01T12:00:00Z');
    const ca = await newCa(now, 600);
    const cert = await issueServingCertificate(ca, { ...names, now, validitySeconds: 3600 });

    expect(cert.notAfter).toEqual(ca.notAfter);
    expect((await certificateDates(cert.certPem)).notAfter).toEqual(ca.notAfter);
  });

  it('refuses to sign with an expired CA', async () => {
    const ca = await newCa(new Date('2030-06-01T12:00:00Z'), 600);
    await expect(
      issueServingCertificate(ca, { ...names, now: new Date('2030-06-01T12:10:00Z'), validitySeconds: 60 }),
    ).rejects.toThrow(/the CA expired at 2030-06-01T12:10:00.000Z/);
  });

  it.each([
    [{ dnsNames: [], ipAddresses: [] }, /at least one DNS name or IP address/],
    [{ dnsNames: ['bad name'], ipAddresses: [] }, /not a DNS name: "bad name"/],
    [{ dnsNames: [], ipAddresses: ['999.1.1.1'] }, /not an IP address: "999.1.1.1"/],
    [{ dnsNames: [], ipAddresses: ['[::1]'] }, /not an IP address/],
  ])('refuses the names %j', async (badNames, message) => {
    const ca = await newCa();
    await expect(
      issueServingCertificate(ca, { ...badNames, now: new Date(), validitySeconds: 60 }),
    ).rejects.toThrow(message);
  });

  describe('with a broken CA', () => {
    const request = { ...names, now: new Date(), validitySeconds: 60 };

    it.each([
      ['garbage certificate', { certPem: 'garbage' }, /the CA certificate is not a PEM certificate/],
      [
        'corrupt PEM body',
        { certPem: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' },
        /the CA certificate: PEM block 1 is not an X.509 certificate/,
      ],
      [
        'garbage key',
        { keyPem: '-----BEGIN PRIVATE KEY-----\nzzzz\n-----END PRIVATE KEY-----\n' },
        /the CA key is not a PEM private key/,
      ],
      ['empty key', { keyPem: '' }, /the CA key is not a PEM private key/],
    ])('%s: a clear InvalidCertificateError', async (_name, broken, message) => {
      const ca = { ...(await newCa()), ...broken };
      const attempt = issueServingCertificate(ca, request);
      await expect(attempt).rejects.toThrow(InvalidCertificateError);
      await expect(attempt).rejects.toThrow(message);
    });

    it('a key of another CA', async () => {
      const [ca, other] = await Promise.all([newCa(), newCa()]);
      await expect(
        issueServingCertificate({ certPem: ca.certPem, keyPem: other.keyPem }, request),
      ).rejects.toThrow('the CA key does not belong to the CA certificate');
    });

    it('a CA key on another curve than P-256', async () => {
      await expect(issueServingCertificate(await p384Ca(), request)).rejects.toThrow(
        /^the CA key must be an ECDSA P-256 key, not ec secp384r1$/,
      );
    });

    it('a certificate that is not a CA', async () => {
      const ca = await newCa();
      const leaf = await issueServingCertificate(ca, request);
      await expect(issueServingCertificate(leaf, request)).rejects.toThrow(/is not a CA/);
    });
  });

  it("takes the first name, cut to X.509's 64 characters, as the common name", async () => {
    const long = `${'a'.repeat(60)}.arbiter-system.svc`;
    const cert = await issueServingCertificate(await newCa(), {
      dnsNames: [long],
      ipAddresses: [],
      now: new Date(),
      validitySeconds: 60,
    });
    expect(new x509.X509Certificate(cert.certPem).subject).toBe(`CN=${long.slice(0, 64)}`);
  });

  it('accepts a one-letter DNS name', async () => {
    const cert = await issueServingCertificate(await newCa(), {
      dnsNames: ['a'],
      ipAddresses: [],
      now: new Date(),
      validitySeconds: 60,
    });
    expect(new x509.X509Certificate(cert.certPem).subject).toBe('CN=a');
  });
});
