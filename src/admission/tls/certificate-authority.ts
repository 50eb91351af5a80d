import { generateKeyPair, privateKeyPem } from './key-pair.js';
import {
  randomSerialNumber,
  pemText,
  subjectName,
  validityWindow,
  type IssuedCertificate,
} from './issued-certificate.js';
import { SIGNING_ALGORITHM, x509 } from './x509.js';

export interface CertificateAuthorityRequest {
  commonName: string;
  now: Date;
  validitySeconds: number;
}

/**
 * A self-signed CA that may sign end-entity certificates only (path length 0): the trust
 * anchor the API server gets as caBundle.
 */
export async function createCertificateAuthority(
  request: CertificateAuthorityRequest,
): Promise<IssuedCertificate> {
  const name = subjectName(request.commonName);
  const { notBefore, notAfter } = validityWindow(request.now, request.validitySeconds);
  const keys = await generateKeyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerialNumber(),
    name,
    notBefore,
    notAfter,
    keys,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
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
