import type { V1Secret } from '@kubernetes/client-node';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../admission/admission-settings.js';
import type { ServingPair } from '../admission/serving-certificates.js';
import {
  caBundle,
  InvalidCertificateError,
  readCertificateBundle,
  readKeyPair,
  type CertificateState,
  type IssuedCertificate,
} from '../admission/tls/index.js';

/**
 * Layout of the admission certificate Secret (type kubernetes.io/tls), which the leader
 * writes and every replica reads:
 *
 * | key              | holds                                                              |
 * | ---------------- | ------------------------------------------------------------------ |
 * | `tls.crt`        | the serving certificate                                            |
 * | `tls.key`        | its private key (PKCS#8 PEM)                                       |
 * | `ca.crt`         | the CA bundle for the webhooks' caBundle: every unexpired CA, newest first |
 * | `ca-signing.crt` | the CA that signs serving certificates now                         |
 * | `ca-signing.key` | its private key                                                    |
 * | `ca-next.crt`    | during a CA rotation only: the new CA, already in `ca.crt`, not signing yet |
 * | `ca-next.key`    | its private key                                                    |
 *
 * The annotation NEXT_CA_PUBLISHED_AT says when `ca-next.crt` joined the bundle. Retired
 * CAs live on only in `ca.crt`, until they expire; their expiry is read from the
 * certificates themselves.
 */
export const TLS_SECRET_KEYS = {
  cert: 'tls.crt',
  key: 'tls.key',
  bundle: 'ca.crt',
  signingCaCert: 'ca-signing.crt',
  signingCaKey: 'ca-signing.key',
  nextCaCert: 'ca-next.crt',
  nextCaKey: 'ca-next.key',
} as const;

export const NEXT_CA_PUBLISHED_AT = 'governance.arbiter.dev/ca-next-published-at';

/** What every replica loads: the serving pair and the bundle. */
export interface LoadedTls {
  pair: ServingPair;
  caBundle: string;
}

export function loadedTlsOf(secret: V1Secret): LoadedTls {
  const data = secretData(secret);
  const pair = { certPem: data.get(TLS_SECRET_KEYS.cert), keyPem: data.get(TLS_SECRET_KEYS.key) };
  readKeyPair(pair.certPem, pair.keyPem, data.labels(TLS_SECRET_KEYS.cert, TLS_SECRET_KEYS.key));
  const bundle = data.get(TLS_SECRET_KEYS.bundle);
  readCertificateBundle(bundle, `${data.where} ${TLS_SECRET_KEYS.bundle}`);
  return { pair, caBundle: bundle };
}

/** The leader's full state; throws InvalidCertificateError when any part is missing or broken. */
export function certificateStateOf(secret: V1Secret): CertificateState {
  const data = secretData(secret);
  const issued = (certKey: string, keyKey: string): IssuedCertificate => {
    const [certPem, keyPem] = [data.get(certKey), data.get(keyKey)];
    const { notBefore, notAfter } = readKeyPair(certPem, keyPem, data.labels(certKey, keyKey));
    return { certPem, keyPem, notBefore, notAfter };
  };
  const nextCa = data.has(TLS_SECRET_KEYS.nextCaCert)
    ? {
        ...issued(TLS_SECRET_KEYS.nextCaCert, TLS_SECRET_KEYS.nextCaKey),
        publishedAt: publishedAt(secret, data.where),
      }
    : undefined;
  return {
    serving: issued(TLS_SECRET_KEYS.cert, TLS_SECRET_KEYS.key),
    signingCa: issued(TLS_SECRET_KEYS.signingCaCert, TLS_SECRET_KEYS.signingCaKey),
    nextCa,
    bundle: readCertificateBundle(
      data.get(TLS_SECRET_KEYS.bundle),
      `${data.where} ${TLS_SECRET_KEYS.bundle}`,
    ),
  };
}

/**
 * The Secret holding `state`. Built on `previous` when there is one, so its
 * resourceVersion guards the replace and labels or annotations others added survive.
 */
export function tlsSecret(
  target: { name: string; namespace: string },
  state: CertificateState,
  now: Date,
  previous?: V1Secret,
): V1Secret {
  const { managedFields: _managedFields, ...metadata } = previous?.metadata ?? {};
  const { [NEXT_CA_PUBLISHED_AT]: _stale, ...annotations } = metadata.annotations ?? {};
  if (state.nextCa) annotations[NEXT_CA_PUBLISHED_AT] = state.nextCa.publishedAt.toISOString();
  const text: Record<string, string> = {
    [TLS_SECRET_KEYS.cert]: state.serving.certPem,
    [TLS_SECRET_KEYS.key]: state.serving.keyPem,
    [TLS_SECRET_KEYS.bundle]: caBundle(state.bundle, now),
    [TLS_SECRET_KEYS.signingCaCert]: state.signingCa.certPem,
    [TLS_SECRET_KEYS.signingCaKey]: state.signingCa.keyPem,
    ...(state.nextCa
      ? {
          [TLS_SECRET_KEYS.nextCaCert]: state.nextCa.certPem,
          [TLS_SECRET_KEYS.nextCaKey]: state.nextCa.keyPem,
        }
      : {}),
  };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: {
      ...metadata,
      name: target.name,
      namespace: target.namespace,
      labels: { ...metadata.labels, [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
      annotations,
    },
    data: Object.fromEntries(
      Object.entries(text).map(([key, value]) => [key, Buffer.from(value, 'utf8').toString('base64')]),
    ),
  };
}

function secretData(secret: V1Secret) {
  const where = `Secret ${secret.metadata?.namespace ?? ''}/${secret.metadata?.name ?? ''}`;
  const data = secret.data ?? {};
  return {
    where,
    has: (key: string) => data[key] !== undefined,
    labels: (cert: string, key: string) => ({ cert: `${where} ${cert}`, key: `${where} ${key}` }),
    get: (key: string): string => {
      const value = data[key];
      if (value === undefined) throw new InvalidCertificateError(`${where} has no ${key}`);
      return Buffer.from(value, 'base64').toString('utf8');
    },
  };
}

function publishedAt(secret: V1Secret, where: string): Date {
  const text = secret.metadata?.annotations?.[NEXT_CA_PUBLISHED_AT];
  const date = text === undefined ? undefined : new Date(text);
  if (!date || Number.isNaN(date.getTime())) {
    throw new InvalidCertificateError(
      `${where} has ${TLS_SECRET_KEYS.nextCaCert} but no valid ${NEXT_CA_PUBLISHED_AT} annotation`,
    );
  }
  return date;
}
