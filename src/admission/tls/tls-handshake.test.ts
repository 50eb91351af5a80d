import { beforeAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority } from './certificate-authority.js';
import type { IssuedCertificate } from './issued-certificate.js';
import { caBundle } from './renewal.js';
import { issueServingCertificate } from './serving-certificate.js';
import { handshake } from './test-fixtures.js';

/** Node's TLS stack as the client, like the API server dialling the webhook. */
describe('a TLS server with an issued pair', () => {
  let oldCa: IssuedCertificate;
  let newCa: IssuedCertificate;
  let stranger: IssuedCertificate;
  let serving: IssuedCertificate;

  beforeAll(async () => {
    const now = new Date();
    [oldCa, newCa, stranger] = await Promise.all([
      createCertificateAuthority({ commonName: 'arbiter-ca@1', now, validitySeconds: 600 }),
      createCertificateAuthority({ commonName: 'arbiter-ca@2', now, validitySeconds: 900 }),
      createCertificateAuthority({ commonName: 'arbiter-ca@1', now, validitySeconds: 600 }),
    ]);
    serving = await issueServingCertificate(newCa, {
      dnsNames: ['arbiter', 'arbiter.arbiter-system.svc'],
      ipAddresses: ['127.0.0.1'],
      now,
      validitySeconds: 300,
    });
  });

  const bundle = () => caBundle([oldCa, newCa], new Date());

  it('is accepted by a client trusting the bundle, by DNS name', async () => {
    expect(await handshake(serving, { caPem: bundle(), servername: 'arbiter.arbiter-system.svc' })).toBe(
      'ok',
    );
  });

  it('is accepted by a client trusting the bundle, by IP address', async () => {
    expect(await handshake(serving, { caPem: bundle() })).toBe('ok');
  });

  it('is refused for a name it does not carry', async () => {
    expect(await handshake(serving, { caPem: bundle(), servername: 'other.arbiter-system.svc' })).toBe(
      'ERR_TLS_CERT_ALTNAME_INVALID',
    );
  });

  it('is refused by a client trusting only CAs that did not sign it, even under the same name', async () => {
    const result = await handshake(serving, {
      caPem: caBundle([oldCa, stranger], new Date()),
      servername: 'arbiter',
    });
    expect(result).toMatch(
      /UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|CERT_SIGNATURE_FAILURE/,
    );
  });
});
