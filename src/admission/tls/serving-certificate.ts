import { isIP } from 'node:net';
import { InvalidCertificateError } from './certificate-error.js';
import { generateKeyPair, importSigningKey, privateKeyPem } from './key-pair.js';
import {
  randomSerialNumber,
  pemText,
  subjectName,
  validityWindow,
  type IssuedCertificate,
} from './issued-certificate.js';
import { readKeyPair } from './read-certificate.js';
import { SIGNING_ALGORITHM, x509 } from './x509.js';

export interface ServingCertificateRequest {
  dnsNames: string[];
  ipAddresses: string[];
  now: Date;
  validitySeconds: number;
}

/**
 * A TLS server certificate signed by `ca`, for the given names. Its notAfter never passes
 * the CA's: a certificate that outlives its issuer would stop verifying early anyway.
 */
export async function issueServingCertificate(
  ca: { certPem: string; keyPem: string },
  request: ServingCertificateRequest,
): Promise<IssuedCertificate> {
  checkNames(request);
  const caInfo = readKeyPair(ca.certPem, ca.keyPem, { cert: 'the CA certificate', key: 'the CA key' });
  if (!caInfo.isCa)
    throw new InvalidCertificateError('the CA certificate is not a CA (basicConstraints CA:FALSE)');
  const window = validityWindow(request.now, request.validitySeconds);
  const notBefore = window.notBefore;
  // Stryker disable next-line EqualityOperator: when both end at once, either is the same instant
  const notAfter = window.notAfter < caInfo.notAfter ? window.notAfter : caInfo.notAfter;
  if (notAfter <= request.now) {
    throw new InvalidCertificateError(`the CA expired at ${caInfo.notAfter.toISOString()}`);
  }
  const caCert = new x509.X509Certificate(ca.certPem);
  const keys = await generateKeyPair();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerialNumber(),
    // Clients match the SANs; the CN is only a label (and X.509 caps it at 64 characters).
    // Stryker disable next-line StringLiteral: checkNames refused a request without any name
    subject: subjectName((request.dnsNames[0] ?? request.ipAddresses[0] ?? '').slice(0, 64)),
    issuer: caCert.subjectName,
    notBefore,
    notAfter,
    publicKey: keys.publicKey,
    signingKey: await importSigningKey(ca.keyPem, 'the CA key'),
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        ...request.dnsNames.map((value) => ({ type: 'dns' as const, value })),
        ...request.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
      ]),
      await authorityKeyIdentifier(caCert),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    certPem: pemText(cert.toString('pem')),
    keyPem: await privateKeyPem(keys.privateKey),
    notBefore,
    notAfter,
  };
}

function checkNames({ dnsNames, ipAddresses }: ServingCertificateRequest): void {
  if (dnsNames.length === 0 && ipAddresses.length === 0) {
    throw new InvalidCertificateError('a serving certificate needs at least one DNS name or IP address');
  }
  const badDns = dnsNames.find((name) => !/^[A-Za-z0-9*]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(name));
  if (badDns !== undefined) throw new InvalidCertificateError(`not a DNS name: ${JSON.stringify(badDns)}`);
  const badIp = ipAddresses.find((address) => isIP(address) === 0);
  if (badIp !== undefined) throw new InvalidCertificateError(`not an IP address: ${JSON.stringify(badIp)}`);
}

/** Points at the CA's own subject key identifier, so verifiers pick the right CA of a bundle. */
async function authorityKeyIdentifier(
  caCert: x509.X509Certificate,
): Promise<x509.AuthorityKeyIdentifierExtension> {
  const keyId = caCert.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
  return keyId
    ? new x509.AuthorityKeyIdentifierExtension(keyId)
    : x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey);
}
