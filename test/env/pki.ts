import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Key material for one control plane, made with openssl into `dir`. */
export interface ControlPlanePki {
  /** CA that signed the serving certificate; clients trust it. */
  caCert: string;
  servingCert: string;
  servingKey: string;
  /** Service-account token signing key pair. */
  serviceAccountKey: string;
  serviceAccountPublicKey: string;
}

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args);
  } catch (err) {
    throw new Error(`openssl ${args.join(' ')} failed (is openssl installed? run test/env/setup)`, {
      cause: err,
    });
  }
}

export async function makePki(dir: string): Promise<ControlPlanePki> {
  const file = (name: string): string => join(dir, name);
  const pki: ControlPlanePki = {
    caCert: file('ca.crt'),
    servingCert: file('apiserver.crt'),
    servingKey: file('apiserver.key'),
    serviceAccountKey: file('sa.key'),
    serviceAccountPublicKey: file('sa.pub'),
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await Promise.all([
    openssl([
      'req',
      '-x509',
      ...ec,
      '-keyout',
      file('ca.key'),
      '-out',
      pki.caCert,
      '-subj',
      '/CN=arbiter-test-ca',
      '-days',
      '7',
    ]),
    openssl([
      'req',
      ...ec,
      '-keyout',
      pki.servingKey,
      '-out',
      file('apiserver.csr'),
      '-subj',
      '/CN=kube-apiserver',
    ]),
    openssl(['genrsa', '-out', pki.serviceAccountKey, '2048']),
  ]);
  await writeFile(
    file('apiserver.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n',
  );
  await Promise.all([
    openssl([
      'x509',
      '-req',
      '-in',
      file('apiserver.csr'),
      '-CA',
      pki.caCert,
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      pki.servingCert,
      '-days',
      '7',
      '-extfile',
      file('apiserver.ext'),
    ]),
    openssl(['rsa', '-in', pki.serviceAccountKey, '-pubout', '-out', pki.serviceAccountPublicKey]),
  ]);
  return pki;
}
