export { InvalidCertificateError } from './certificate-error.js';
export { createCertificateAuthority, type CertificateAuthorityRequest } from './certificate-authority.js';
export { CLOCK_SKEW_SECONDS, type IssuedCertificate } from './issued-certificate.js';
export {
  isIssuedBy,
  readCertificate,
  readCertificateBundle,
  readKeyPair,
  type BundledCertificate,
  type CertificateInfo,
} from './read-certificate.js';
export { caBundle, renewalDue, RENEWAL_FRACTION } from './renewal.js';
export {
  rotate,
  type CertificateState,
  type PendingCa,
  type RotationSettings,
  type RotationStep,
} from './rotation.js';
export { servingNames, type ServingNames } from './san.js';
export { issueServingCertificate, type ServingCertificateRequest } from './serving-certificate.js';
