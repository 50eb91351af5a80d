import type { V1Secret } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidCertificateError, rotate, type CertificateState } from '../admission/tls/index.js';
import {
  certificateStateOf,
  loadedTlsOf,
  NEXT_CA_PUBLISHED_AT,
  TLS_SECRET_KEYS,
  tlsSecret,
} from './admission-tls-secret.js';

const target = { name: 'arbiter-admission-tls', namespace: 'arbiter-system' };
const settings = {
  caCommonName: 'test-ca',
  names: { dnsNames: ['arbiter.arbiter-system.svc'], ipAddresses: [] },
  caValiditySeconds: 300,
  certValiditySeconds: 60,
  propagationDelayMs: 10_000,
};
const t0 = new Date();
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);

let state: CertificateState;
let rotating: CertificateState;

beforeAll(async () => {
  state = (await rotate(undefined, t0, settings))!.state;
  // At two thirds of the CA's lifetime a new CA joins the bundle.
  rotating = (await rotate(state, at(200), settings))!.state;
});

const text = (secret: V1Secret, key: string) => Buffer.from(secret.data![key]!, 'base64').toString('utf8');

describe('the certificate Secret', () => {
  it('is a kubernetes.io/tls Secret with the serving pair, the bundle and the signing CA', () => {
    const secret = tlsSecret(target, state, t0);

    expect(secret).toMatchObject({
      type: 'kubernetes.io/tls',
      metadata: { ...target, labels: { 'app.kubernetes.io/managed-by': 'arbiter' }, annotations: {} },
    });
    expect(Object.keys(secret.data!).sort()).toEqual([
      'ca-signing.crt',
      'ca-signing.key',
      'ca.crt',
      'tls.crt',
      'tls.key',
    ]);
    expect(text(secret, 'tls.crt')).toBe(state.serving.certPem);
    expect(text(secret, 'ca.crt')).toBe(state.signingCa.certPem);
  });

  it('round-trips the state', () => {
    expect(certificateStateOf(tlsSecret(target, state, t0))).toEqual(state);
  });

  it('round-trips a CA rotation under way: the next CA and when it joined the bundle', () => {
    const secret = tlsSecret(target, rotating, at(200));

    expect(secret.metadata?.annotations?.[NEXT_CA_PUBLISHED_AT]).toBe(at(200).toISOString());
    expect(text(secret, 'ca.crt')).toBe(rotating.nextCa!.certPem + rotating.signingCa.certPem);
    expect(certificateStateOf(secret)).toEqual(rotating);
  });

  it('keeps what others put on it, drops managedFields and a stale rotation annotation', () => {
    const previous: V1Secret = {
      metadata: {
        ...target,
        resourceVersion: '42',
        labels: { team: 'x' },
        annotations: { note: 'keep', [NEXT_CA_PUBLISHED_AT]: 'stale' },
        managedFields: [{ manager: 'kubectl' }],
      },
      data: { extra: 'eA==' },
    };
    const secret = tlsSecret(target, state, t0, previous);

    expect(secret.metadata).toEqual({
      ...target,
      resourceVersion: '42',
      labels: { team: 'x', 'app.kubernetes.io/managed-by': 'arbiter' },
      annotations: { note: 'keep' },
    });
  });

  it('gives every replica the pair and the bundle', () => {
    expect(loadedTlsOf(tlsSecret(target, rotating, at(200)))).toEqual({
      pair: { certPem: rotating.serving.certPem, keyPem: rotating.serving.keyPem },
      caBundle: rotating.nextCa!.certPem + rotating.signingCa.certPem,
    });
  });

  describe('broken', () => {
    const without = (key: string) => {
      const secret = tlsSecret(target, state, t0);
      delete secret.data![key];
      return secret;
    };
    const replaced = (key: string, value: string) => {
      const secret = tlsSecret(target, state, t0);
      secret.data![key] = Buffer.from(value).toString('base64');
      return secret;
    };

    it.each(Object.values(TLS_SECRET_KEYS).filter((key) => !key.startsWith('ca-next')))(
      'without %s',
      (key) => {
        expect(() => certificateStateOf(without(key))).toThrow(
          new InvalidCertificateError(`Secret arbiter-system/arbiter-admission-tls has no ${key}`),
        );
      },
    );

    it('an unparsable serving certificate, for the leader and for every replica', () => {
      const secret = replaced('tls.crt', 'garbage');
      const message = /^Secret arbiter-system\/arbiter-admission-tls tls.crt is not a PEM certificate/;
      expect(() => certificateStateOf(secret)).toThrow(message);
      expect(() => loadedTlsOf(secret)).toThrow(message);
    });

    it('a serving key that is not the certificate’s', () => {
      const secret = replaced('tls.key', state.signingCa.keyPem);
      expect(() => loadedTlsOf(secret)).toThrow(
        'tls.key does not belong to Secret arbiter-system/arbiter-admission-tls tls.crt',
      );
    });

    it('data that is not base64 text', () => {
      const secret = tlsSecret(target, state, t0);
      secret.data!['ca.crt'] = '%%%';
      expect(() => loadedTlsOf(secret)).toThrow(/ca.crt is not a PEM certificate/);
    });

    it('a next CA without the time it joined the bundle', () => {
      const secret = tlsSecret(target, rotating, at(200));
      delete secret.metadata!.annotations![NEXT_CA_PUBLISHED_AT];
      expect(() => certificateStateOf(secret)).toThrow(
        /has ca-next.crt but no valid .*ca-next-published-at annotation/,
      );
    });

    it('a Secret with no data at all', () => {
      expect(() => loadedTlsOf({ metadata: target })).toThrow(InvalidCertificateError);
    });
  });
});
