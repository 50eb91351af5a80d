import { randomBytes } from 'node:crypto';
import { InvalidCertificateError } from './certificate-error.js';

/** A certificate with its private key, as PEM, and its validity (whole seconds, as encoded). */
export interface IssuedCertificate {
  certPem: string;
  /** PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----"). */
  keyPem: string;
  notBefore: Date;
  notAfter: Date;
}

/** PEM text as tools write it: ending with a newline, so concatenated blocks stay apart. */
export function pemText(pem: string): string {
  return pem.endsWith('\n') ? pem : `${pem}\n`;
}

/** How far notBefore is backdated, so a peer whose clock is slightly behind accepts a new certificate. */
export const CLOCK_SKEW_SECONDS = 60;

/**
 * notBefore and notAfter for a certificate made at `now`. notBefore is backdated by
 * CLOCK_SKEW_SECONDS, but by at most a tenth of the validity: seconds-long test lifetimes
 * must not start mostly in the past (renewal counts from notBefore). X.509 encodes whole
 * seconds, so both are truncated to what the certificate will say.
 */
export function validityWindow(now: Date, validitySeconds: number): { notBefore: Date; notAfter: Date } {
  if (!Number.isSafeInteger(validitySeconds) || validitySeconds < 1) {
    throw new InvalidCertificateError(`validitySeconds must be a positive integer, not ${validitySeconds}`);
  }
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const backdateSeconds = Math.min(CLOCK_SKEW_SECONDS, Math.floor(validitySeconds / 10));
  return {
    notBefore: new Date((nowSeconds - backdateSeconds) * 1000),
    notAfter: new Date((nowSeconds + validitySeconds) * 1000),
  };
}

/**
 * The subject `CN=<commonName>`. Only DNS-name, IP-address and label characters are
 * accepted: the library parses quotes, commas and escapes in names, and ours never need them.
 */
export function subjectName(commonName: string): { CN: string[] }[] {
  if (!/^[A-Za-z0-9*@._:-]{1,64}$/.test(commonName)) {
    throw new InvalidCertificateError(
      `a common name must be 1 to 64 of A-Z a-z 0-9 * @ . _ : -, not ${JSON.stringify(commonName)}`,
    );
  }
  return [{ CN: [commonName] }];
}

/** A random positive 127-bit serial number in hex (RFC 5280: positive, at most 20 octets). */
export function randomSerialNumber(): string {
  const bytes = randomBytes(16);
  // Top bit clear keeps it positive; the next bit set keeps the DER encoding 16 octets.
  bytes[0] = (bytes[0]! & 0x7f) | 0x40;
  return bytes.toString('hex');
}
