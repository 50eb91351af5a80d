import { X509Certificate as NodeCertificate } from 'node:crypto';
import { InvalidCertificateError, invalidCertificate } from './certificate-error.js';
import { pemText } from './issued-certificate.js';
import { parsePrivateKey } from './key-pair.js';
import { x509 } from './x509.js';

/** What the rotation needs to know about a certificate. */
export interface CertificateInfo {
  notBefore: Date;
  notAfter: Date;
  isCa: boolean;
  /** Subject alternative names. */
  dnsNames: string[];
  ipAddresses: string[];
}

/** One CA of a bundle. */
export interface BundledCertificate {
  certPem: string;
  notAfter: Date;
}

/** Parses exactly one PEM certificate; `what` names it in the error. */
export function readCertificate(pem: string, what: string): CertificateInfo {
  const parsed = parsePemCertificates(pem, what);
  if (parsed.length !== 1 || !parsed[0]) {
    throw new InvalidCertificateError(`${what} must hold exactly one certificate, found ${parsed.length}`);
  }
  return parsed[0].info;
}

/** Parses a PEM bundle of one or more certificates. */
export function readCertificateBundle(pem: string, what: string): BundledCertificate[] {
  return parsePemCertificates(pem, what).map(({ certPem, info }) => ({ certPem, notAfter: info.notAfter }));
}

/** Parses a certificate and its private key and checks that they belong together; `what` names both. */
export function readKeyPair(
  certPem: string,
  keyPem: string,
  what: { cert: string; key: string },
): CertificateInfo {
  const info = readCertificate(certPem, what.cert);
  const key = parsePrivateKey(keyPem, what.key);
  let cert: NodeCertificate;
  try {
    cert = new NodeCertificate(certPem);
  } catch (err) {
    throw invalidCertificate(`${what.cert} is not an X.509 certificate OpenSSL accepts`, err);
  }
  if (!cert.checkPrivateKey(key)) {
    throw new InvalidCertificateError(`${what.key} does not belong to ${what.cert}`);
  }
  return info;
}

/** Whether `caCertPem`'s key signed `certPem` (both already known to parse). */
export function isIssuedBy(certPem: string, caCertPem: string): boolean {
  return new NodeCertificate(certPem).verify(new NodeCertificate(caCertPem).publicKey);
}

function parsePemCertificates(pem: string, what: string): { certPem: string; info: CertificateInfo }[] {
  if (typeof pem !== 'string' || !pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new InvalidCertificateError(`${what} is not a PEM certificate (no "BEGIN CERTIFICATE" line)`);
  }
  let blocks: ReturnType<typeof x509.PemConverter.decodeWithHeaders>;
  try {
    blocks = x509.PemConverter.decodeWithHeaders(pem);
  } catch (err) {
    throw invalidCertificate(`${what} is not valid PEM`, err);
  }
  return blocks.map((block, index) => {
    if (block.type !== 'CERTIFICATE') {
      throw new InvalidCertificateError(
        `${what}: PEM block ${index + 1} is a ${block.type}, not a CERTIFICATE`,
      );
    }
    // The library decodes parts (extensions) lazily: read everything here, inside the try.
    try {
      const cert = new x509.X509Certificate(block.rawData);
      return { certPem: pemText(cert.toString('pem')), info: infoOf(cert) };
    } catch (err) {
      throw invalidCertificate(`${what}: PEM block ${index + 1} is not an X.509 certificate`, err);
    }
  });
}

function infoOf(cert: x509.X509Certificate): CertificateInfo {
  const names = cert.getExtension(x509.SubjectAlternativeNameExtension)?.names.items ?? [];
  return {
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    isCa: cert.getExtension(x509.BasicConstraintsExtension)?.ca ?? false,
    dnsNames: names.filter((name) => name.type === 'dns').map((name) => name.value),
    ipAddresses: names.filter((name) => name.type === 'ip').map((name) => name.value),
  };
}
