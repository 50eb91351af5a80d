import { createPrivateKey, createPublicKey, generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InvalidCertificateError } from './certificate-error.js';
import { generateKeyPair, importSigningKey, parsePrivateKey, privateKeyPem } from './key-pair.js';
import { subtle, SIGNING_ALGORITHM } from './x509.js';

const pkcs8 = (pair: { privateKey: KeyObject }) =>
  pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
const rsaPem = () => pkcs8(generateKeyPairSync('rsa', { modulusLength: 1024 }));
const ecPem = (namedCurve: string) => pkcs8(generateKeyPairSync('ec', { namedCurve }));
const ed25519Pem = () => pkcs8(generateKeyPairSync('ed25519'));

describe('key pairs', () => {
  it('generates an exportable ECDSA P-256 pair, written as PKCS#8 PEM that OpenSSL reads', async () => {
    const keys = await generateKeyPair();
    expect(keys.privateKey.algorithm).toMatchObject({ name: 'ECDSA', namedCurve: 'P-256' });
    expect(keys.privateKey.extractable).toBe(true);
    expect(keys.privateKey.usages).toEqual(['sign']);
    expect(keys.publicKey.usages).toEqual(['verify']);
    const pem = await privateKeyPem(keys.privateKey);
    expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END PRIVATE KEY-----\n$/);
    const parsed = createPrivateKey(pem);
    expect([parsed.asymmetricKeyType, parsed.asymmetricKeyDetails?.namedCurve]).toEqual(['ec', 'prime256v1']);
  });

  it('parses any PEM private key, and names the input when it is none', () => {
    expect(parsePrivateKey(rsaPem(), 'tls.key').asymmetricKeyType).toBe('rsa');
    let thrown: unknown;
    try {
      parsePrivateKey('-----BEGIN PRIVATE KEY-----\nzzzz\n-----END PRIVATE KEY-----\n', 'tls.key');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidCertificateError);
    expect((thrown as Error).message).toMatch(/^tls\.key is not a PEM private key: ./);
    expect((thrown as Error).cause).toBeInstanceOf(Error);
  });

  it('imports a P-256 key for signing: what it signs verifies with its public key', async () => {
    const pem = ecPem('prime256v1');
    const key = await importSigningKey(pem, 'the CA key');
    expect(key.usages).toEqual(['sign']);
    expect(key.extractable).toBe(false);
    const data = Buffer.from('to be signed');
    const signature = Buffer.from(await subtle.sign(SIGNING_ALGORITHM, key, data));
    const publicKey = createPublicKey(pem);
    expect(verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
  });

  it.each([
    ['an RSA key', () => rsaPem(), 'the CA key must be an ECDSA P-256 key, not rsa'],
    ['a P-384 key', () => ecPem('secp384r1'), 'the CA key must be an ECDSA P-256 key, not ec secp384r1'],
    ['an Ed25519 key', () => ed25519Pem(), 'the CA key must be an ECDSA P-256 key, not ed25519'],
  ])('refuses to sign with %s', async (_name, pem, message) => {
    const attempt = importSigningKey(pem(), 'the CA key');
    await expect(attempt).rejects.toThrow(InvalidCertificateError);
    await expect(attempt).rejects.toThrow(new RegExp(`^${message}$`));
  });

  it('refuses a signing key that is no key, naming it', async () => {
    await expect(importSigningKey('garbage', 'the CA key')).rejects.toThrow(
      /^the CA key is not a PEM private key: /,
    );
  });
});
