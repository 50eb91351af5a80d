import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority } from './certificate-authority.js';
import { InvalidCertificateError } from './certificate-error.js';
import type { IssuedCertificate } from './issued-certificate.js';
import { isIssuedBy, readCertificate, readCertificateBundle, readKeyPair } from './read-certificate.js';
import { issueServingCertificate } from './serving-certificate.js';
import { KEY_ALGORITHM, SIGNING_ALGORITHM, subtle, x509 } from './x509.js';

let ca: IssuedCertificate;
let other: IssuedCertificate;
let leaf: IssuedCertificate;

beforeAll(async () => {
  const now = new Date();
  [ca, other] = await Promise.all([
    createCertificateAuthority({ commonName: 'ca', now, validitySeconds: 600 }),
    createCertificateAuthority({ commonName: 'other', now, validitySeconds: 900 }),
  ]);
  leaf = await issueServingCertificate(ca, {
    dnsNames: ['a.example'],
    ipAddresses: ['10.0.0.1'],
    now,
    validitySeconds: 60,
  });
});

const keyOnlyPem = () => ca.keyPem;
const garbage: [string, () => string, RegExp][] = [
  ['an empty string', () => '', /is not a PEM certificate/],
  ['plain text', () => 'hello', /is not a PEM certificate/],
  ['a private key', keyOnlyPem, /is not a PEM certificate/],
  [
    'a CERTIFICATE block holding junk',
    () => '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n',
    /PEM block 1 is not an X.509 certificate/,
  ],
  [
    'a truncated certificate',
    () => leaf.certPem.slice(0, 200) + '\n-----END CERTIFICATE-----\n',
    /PEM block 1 is not an X.509 certificate|is not valid PEM/,
  ],
  [
    'a key block after a certificate',
    () => leaf.certPem + ca.keyPem.replace(/PRIVATE KEY/g, 'EC PRIVATE KEY'),
    /PEM block 2 is a EC PRIVATE KEY, not a CERTIFICATE/,
  ],
];

describe('readCertificate', () => {
  it('reads validity, CA flag and SANs', () => {
    expect(readCertificate(leaf.certPem, 'leaf')).toEqual({
      notBefore: leaf.notBefore,
      notAfter: leaf.notAfter,
      isCa: false,
      dnsNames: ['a.example'],
      ipAddresses: ['10.0.0.1'],
    });
    expect(readCertificate(ca.certPem, 'ca')).toMatchObject({ isCa: true, dnsNames: [], ipAddresses: [] });
  });

  it.each(garbage)('refuses %s with an InvalidCertificateError naming the input', (_name, pem, message) => {
    expect(() => readCertificate(pem(), 'the thing')).toThrow(InvalidCertificateError);
    expect(() => readCertificate(pem(), 'the thing')).toThrow(message);
    expect(() => readCertificate(pem(), 'the thing')).toThrow(/^the thing/);
  });

  it('refuses two certificates where one is expected', () => {
    expect(() => readCertificate(leaf.certPem + ca.certPem, 'x')).toThrow(
      'x must hold exactly one certificate, found 2',
    );
  });

  it('never fails with anything but an InvalidCertificateError', () => {
    fc.assert(
      fc.property(pemLike(), (pem) => {
        try {
          readCertificate(pem, 'x');
        } catch (err) {
          expect(err).toBeInstanceOf(InvalidCertificateError);
        }
      }),
      { numRuns: 2_000 },
    );
  });
});

/** Strings that look more or less like the leaf certificate's PEM. */
function pemLike() {
  const length = leaf.certPem.length;
  return fc.oneof(
    fc.string(),
    fc.base64String().map((body) => `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`),
    fc.nat(length).map((cut) => leaf.certPem.slice(0, cut)),
    fc
      .tuple(
        fc.nat(length - 1),
        fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-\n '),
      )
      .map(([at, c]) => leaf.certPem.slice(0, at) + c + leaf.certPem.slice(at + 1)),
  );
}

describe('readCertificateBundle', () => {
  it('reads every certificate with its expiry, in order', () => {
    const bundle = readCertificateBundle(ca.certPem + other.certPem, 'bundle');
    expect(bundle.map((c) => c.notAfter)).toEqual([ca.notAfter, other.notAfter]);
    expect(bundle.map((c) => c.certPem.trim())).toEqual([ca.certPem.trim(), other.certPem.trim()]);
  });

  it.each(garbage)('refuses %s', (_name, pem, message) => {
    expect(() => readCertificateBundle(pem(), 'the bundle')).toThrow(message);
  });
});

describe('readKeyPair', () => {
  const pair = { cert: 'tls.crt', key: 'tls.key' };

  it('accepts a certificate with its own key', () => {
    expect(readKeyPair(leaf.certPem, leaf.keyPem, pair).notAfter).toEqual(leaf.notAfter);
  });

  it('never fails with anything but an InvalidCertificateError on a damaged certificate', () => {
    fc.assert(
      fc.property(pemLike(), (pem) => {
        try {
          readKeyPair(pem, leaf.keyPem, pair);
        } catch (err) {
          expect(err).toBeInstanceOf(InvalidCertificateError);
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuses a key of another certificate', () => {
    expect(() => readKeyPair(leaf.certPem, ca.keyPem, pair)).toThrow('tls.key does not belong to tls.crt');
  });

  it.each(['', 'garbage', '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'])(
    'refuses the key %j with a clear error',
    (keyPem) => {
      expect(() => readKeyPair(leaf.certPem, keyPem, pair)).toThrow(InvalidCertificateError);
      expect(() => readKeyPair(leaf.certPem, keyPem, pair)).toThrow(/^tls.key is not a PEM private key: /);
    },
  );
});

describe('isIssuedBy', () => {
  it('tells the issuing CA from another', () => {
    expect(isIssuedBy(leaf.certPem, ca.certPem)).toBe(true);
    expect(isIssuedBy(leaf.certPem, other.certPem)).toBe(false);
  });
});

describe('readCertificate, edge cases', () => {
  it('reads a certificate without basicConstraints as no CA', async () => {
    const keys = await subtle.generateKey(KEY_ALGORITHM, false, ['sign', 'verify']);
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '01',
      name: 'CN=plain',
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 60_000),
      keys,
      signingAlgorithm: SIGNING_ALGORITHM,
      extensions: [],
    });
    expect(readCertificate(cert.toString('pem'), 'plain').isCa).toBe(false);
  });

  it('refuses a missing certificate with an InvalidCertificateError naming it', () => {
    const attempt = () => readCertificate(undefined as unknown as string, 'tls.crt of the Secret');
    expect(attempt).toThrow(InvalidCertificateError);
    expect(attempt).toThrow(/^tls\.crt of the Secret is not a PEM certificate/);
  });

  it('refuses, naming it, a certificate OpenSSL will not load (here: a byte after its DER)', async () => {
    const own = await createCertificateAuthority({ commonName: 'ca', now: new Date(), validitySeconds: 600 });
    const der = Buffer.from(own.certPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    const body = Buffer.concat([der, Buffer.from([0])]).toString('base64');
    const pem = `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
    const attempt = () => readKeyPair(pem, own.keyPem, { cert: 'the CA certificate', key: 'the CA key' });
    expect(attempt).toThrow(InvalidCertificateError);
    expect(attempt).toThrow(/^the CA certificate is not an X\.509 certificate OpenSSL accepts: /);
  });
});
