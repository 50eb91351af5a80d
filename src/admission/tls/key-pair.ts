import { createPrivateKey, type KeyObject } from 'node:crypto';
import { InvalidCertificateError, invalidCertificate } from './certificate-error.js';
import { pemText } from './issued-certificate.js';
import { KEY_ALGORITHM, subtle, x509 } from './x509.js';

/** A fresh, exportable ECDSA P-256 key pair. */
export function generateKeyPair(): Promise<CryptoKeyPair> {
  return subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify']);
}

/** The private key as PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----"). */
export async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = await subtle.exportKey('pkcs8', key);
  return pemText(x509.PemConverter.encode(der, 'PRIVATE KEY'));
}

/** Parses a PEM private key (any type Node reads); `what` names it in the error. */
export function parsePrivateKey(pem: string, what: string): KeyObject {
  try {
    return createPrivateKey({ key: pem, format: 'pem' });
  } catch (err) {
    throw invalidCertificate(`${what} is not a PEM private key`, err);
  }
}

/** Imports a CA's P-256 private key for signing certificates. */
export async function importSigningKey(pem: string, what: string): Promise<CryptoKey> {
  const key = parsePrivateKey(pem, what);
  const curve = key.asymmetricKeyDetails?.namedCurve;
  // Stryker disable next-line ConditionalExpression: only EC keys have a named curve, so the curve check alone refuses the others
  if (key.asymmetricKeyType !== 'ec' || curve !== 'prime256v1') {
    throw new InvalidCertificateError(
      // Stryker disable next-line StringLiteral: Node names the type of every private key it parses
      `${what} must be an ECDSA P-256 key, not ${key.asymmetricKeyType ?? 'unknown'}${curve ? ` ${curve}` : ''}`,
    );
  }
  const der = key.export({ format: 'der', type: 'pkcs8' });
  return subtle.importKey('pkcs8', der, KEY_ALGORITHM, false, ['sign']);
}
