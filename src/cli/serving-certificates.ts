import type { Logger } from 'pino';
import type { ServingCertificates } from '../admission/serving-certificates.js';
import { servingNames } from '../admission/tls/index.js';
import { DirectoryServingCertificates } from '../controller/directory-serving-certificates.js';
import { SecretServingCertificates } from '../controller/secret-serving-certificates.js';
import { Secrets } from '../controller/secrets.js';
import type { AdmissionDeps } from './admission.js';

/** Bound on each Secret call. */
const SECRET_TIMEOUT_MS = 10_000;

/** The serving certificates the options ask for: generated into a Secret, or cert-manager's folder. */
export function servingCertificates(deps: AdmissionDeps, logger: Logger): ServingCertificates {
  const source = deps.options.certificates;
  const certLogger = logger.child({ component: 'admission-certificates' });
  if (source.kind === 'directory')
    return new DirectoryServingCertificates({ dir: source.dir, logger: certLogger });
  return new SecretServingCertificates({
    secrets: new Secrets(deps.kubeConfig, deps.namespace, SECRET_TIMEOUT_MS),
    secretName: source.secretName,
    names: servingNames(deps.options.endpoint),
    caValiditySeconds: source.caValiditySeconds,
    certValiditySeconds: source.certValiditySeconds,
    isLeader: deps.isLeader,
    clock: deps.clock,
    logger: certLogger,
    // A lifetime of minutes (tests, trials) cannot wait the default 30 s for a new CA to spread.
    settings: { propagationDelayMs: Math.min(30_000, (source.certValiditySeconds * 1000) / 10) },
  });
}
