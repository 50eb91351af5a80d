import { isIP } from 'node:net';
import type { AdmissionEndpoint } from '../admission-settings.js';
import { InvalidCertificateError } from './certificate-error.js';

/** The subject alternative names a serving certificate needs. */
export interface ServingNames {
  dnsNames: string[];
  ipAddresses: string[];
}

/**
 * The names under which the API server reaches the webhooks: the URL's host (an IP SAN
 * for an address, since TLS clients match IPs only against IP SANs), or the Service's DNS
 * names (the API server dials NAME.NAMESPACE.svc; the others cover in-cluster clients).
 */
export function servingNames(endpoint: AdmissionEndpoint): ServingNames {
  if (endpoint.kind === 'service') {
    const { name, namespace } = endpoint;
    return {
      dnsNames: [
        name,
        `${name}.${namespace}`,
        `${name}.${namespace}.svc`,
        `${name}.${namespace}.svc.cluster.local`,
      ],
      ipAddresses: [],
    };
  }
  const host = hostOf(endpoint.url);
  return isIP(host) === 0 ? { dnsNames: [host], ipAddresses: [] } : { dnsNames: [], ipAddresses: [host] };
}

function hostOf(url: string): string {
  let hostname: string;
  try {
    hostname = new URL(url).hostname;
  } catch (err) {
    throw new InvalidCertificateError(`the admission URL ${JSON.stringify(url)} is not a URL`, {
      cause: err,
    });
  }
  if (hostname === '')
    throw new InvalidCertificateError(`the admission URL ${JSON.stringify(url)} has no host`);
  // WHATWG URLs keep IPv6 literals in brackets ("[::1]").
  // Stryker disable next-line LogicalOperator,StringLiteral: brackets are forbidden in URL hosts but around an IPv6 literal, so they come in pairs
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}
