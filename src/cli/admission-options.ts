import {
  DEFAULT_ADMISSION_PORT,
  DEFAULT_ADMISSION_TIMEOUT_SECONDS,
  DEFAULT_CERT_SECRET_NAME,
  type AdmissionEndpoint,
  type AdmissionOptions,
  type CertificateSource,
  type FailurePolicy,
} from '../admission/admission-settings.js';
import { UsageError } from './command-line.js';
import { urlOf } from './url-arg.js';

export interface AdmissionFlags {
  'admission-service'?: string;
  'admission-url'?: string;
  'admission-port'?: string;
  'admission-timeout'?: string;
  'admission-failure-policy'?: string;
  'admission-cert-dir'?: string;
  'admission-inject-ca-from'?: string;
  'admission-cert-secret'?: string;
  'admission-ca-validity'?: string;
  'admission-cert-validity'?: string;
  'admission-owner-clusterrole'?: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DAY_SECONDS = 24 * 60 * 60;

/** The admission webhooks' options, or undefined when neither a Service nor a URL is given. */
export function admissionOptions(flags: AdmissionFlags): AdmissionOptions | undefined {
  const endpoint = endpointOf(flags);
  if (!endpoint) {
    const stray = Object.entries(flags).find(
      ([flag, value]) => flag.startsWith('admission-') && value !== undefined,
    );
    if (stray)
      throw invalid(
        `--${stray[0]} needs --admission-service NAMESPACE/NAME or --admission-url https://HOST:PORT`,
      );
    return undefined;
  }
  return {
    port: integer(flags['admission-port'], 'admission-port', DEFAULT_ADMISSION_PORT, 0, 65535),
    endpoint,
    timeoutSeconds: integer(
      flags['admission-timeout'],
      'admission-timeout',
      DEFAULT_ADMISSION_TIMEOUT_SECONDS,
      1,
      30,
    ),
    failurePolicy: failurePolicyOf(flags['admission-failure-policy']),
    certificates: certificatesOf(flags),
    ownerClusterRole: ownerOf(flags['admission-owner-clusterrole']),
  };
}

function endpointOf(flags: AdmissionFlags): AdmissionEndpoint | undefined {
  const service = flags['admission-service'];
  const url = flags['admission-url'];
  if (service !== undefined && url !== undefined)
    throw invalid('--admission-service and --admission-url exclude each other');
  if (service !== undefined) return serviceEndpoint(service);
  if (url !== undefined) return urlEndpoint(url);
  return undefined;
}

function serviceEndpoint(raw: string): AdmissionEndpoint {
  const match = /^([^/]+)\/([^/:]+)(?::(\d+))?$/.exec(raw);
  const [namespace, name, port] = match ? [match[1]!, match[2]!, match[3]] : [];
  if (!namespace || !name || !DNS_LABEL.test(namespace) || !DNS_LABEL.test(name))
    throw invalid(`--admission-service: ${raw} is not NAMESPACE/NAME[:PORT]`);
  return { kind: 'service', namespace, name, port: integer(port, 'admission-service port', 443, 1, 65535) };
}

function urlEndpoint(raw: string): AdmissionEndpoint {
  const url = urlOf(raw);
  if (url === undefined) throw invalid(`--admission-url: ${raw} is not a URL; use https://HOST:PORT`);
  if (url.protocol !== 'https:')
    throw invalid(`--admission-url: the API server calls webhooks over https, not ${url.protocol}`);
  if (url.pathname !== '/' || url.search || url.hash || url.username)
    throw invalid('--admission-url: give only https://HOST:PORT; the webhook paths are added');
  return { kind: 'url', url: `${url.protocol}//${url.host}` };
}

function ownerOf(raw: string | undefined): string | undefined {
  if (raw !== undefined && !/^[a-z0-9]([-a-z0-9.:]*[a-z0-9])?$/.test(raw))
    throw invalid(`--admission-owner-clusterrole: ${raw} is not a ClusterRole name`);
  return raw;
}

function failurePolicyOf(raw: string | undefined): FailurePolicy | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'Fail' || raw === 'Ignore') return raw;
  throw invalid(`--admission-failure-policy must be Fail or Ignore, not ${raw}`);
}

function certificatesOf(flags: AdmissionFlags): CertificateSource {
  const dir = flags['admission-cert-dir'];
  if (dir !== undefined) {
    for (const flag of ['admission-cert-secret', 'admission-ca-validity', 'admission-cert-validity'] as const)
      if (flags[flag] !== undefined) throw invalid(`--${flag} makes no sense with --admission-cert-dir`);
    const injectCaFrom = flags['admission-inject-ca-from'];
    if (injectCaFrom !== undefined && !/^[^/]+\/[^/]+$/.test(injectCaFrom))
      throw invalid(`--admission-inject-ca-from: ${injectCaFrom} is not NAMESPACE/CERTIFICATE`);
    return { kind: 'directory', dir, injectCaFrom };
  }
  if (flags['admission-inject-ca-from'] !== undefined)
    throw invalid('--admission-inject-ca-from needs --admission-cert-dir (certificates from cert-manager)');
  const caValiditySeconds = integer(
    flags['admission-ca-validity'],
    'admission-ca-validity',
    365 * DAY_SECONDS,
    60,
    100 * 365 * DAY_SECONDS,
  );
  const certValiditySeconds = integer(
    flags['admission-cert-validity'],
    'admission-cert-validity',
    90 * DAY_SECONDS,
    30,
    caValiditySeconds,
  );
  return {
    kind: 'generated',
    secretName: flags['admission-cert-secret'] ?? DEFAULT_CERT_SECRET_NAME,
    caValiditySeconds,
    certValiditySeconds,
  };
}

function integer(raw: string | undefined, flag: string, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max)
    throw invalid(`--${flag}: ${raw} is not a whole number from ${min} to ${max}`);
  return value;
}

function invalid(message: string): UsageError {
  return new UsageError(message);
}
