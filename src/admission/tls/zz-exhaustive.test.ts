import { it, expect } from 'vitest';
import { createCertificateAuthority } from './certificate-authority.js';
import { InvalidCertificateError } from './certificate-error.js';
import { readCertificate, readKeyPair } from './read-certificate.js';
import { issueServingCertificate } from './serving-certificate.js';

it('exhaustive single-char mutations', async () => {
  const now = new Date();
  const ca = await createCertificateAuthority({ commonName: 'ca', now, validitySeconds: 600 });
  const leaf = await issueServingCertificate(ca, { dnsNames: ['a.example'], ipAddresses: ['10.0.0.1'], now, validitySeconds: 60 });
  const bad: string[] = [];
  for (let i = 0; i < leaf.certPem.length; i++) {
    for (const c of 'AZaz09+/=\n -') {
      const pem = leaf.certPem.slice(0, i) + c + leaf.certPem.slice(i + 1);
      for (const f of [() => readCertificate(pem, 'x'), () => readKeyPair(pem, leaf.keyPem, { cert: 'c', key: 'k' })]) {
        try { f(); } catch (err) { if (!(err instanceof InvalidCertificateError)) bad.push(`${i} ${JSON.stringify(c)}: ${String(err)}`); }
      }
    }
  }
  expect(bad.slice(0, 10)).toEqual([]);
}, 120_000);
