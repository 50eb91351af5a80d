import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer } from 'node:tls';
import { pino, type Logger } from 'pino';

/**
 * Test helpers that check certificates against independent references: the openssl
 * command line and Node's TLS stack (both OpenSSL, neither @peculiar/x509).
 */

export interface OpensslResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `openssl ...args` in a temp dir holding `files` (name -> content). */
export async function openssl(args: string[], files: Record<string, string> = {}): Promise<OpensslResult> {
  const dir = await mkdtemp(join(tmpdir(), 'arbiter-openssl-'));
  try {
    for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
    return await new Promise((resolve, reject) => {
      execFile('openssl', args, { cwd: dir, timeout: 10_000 }, (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') reject(new Error(`openssl did not run: ${err.message}`));
        else resolve({ code: typeof err?.code === 'number' ? err.code : 0, stdout, stderr });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `openssl x509 -noout -text` of a certificate. */
export async function certificateText(certPem: string): Promise<string> {
  const result = await openssl(['x509', '-noout', '-text', '-in', 'cert.pem'], { 'cert.pem': certPem });
  if (result.code !== 0) throw new Error(`openssl x509 failed: ${result.stderr}`);
  return result.stdout;
}

/** The public key of a certificate and of a private key, as openssl prints them. */
export async function publicKeys(
  certPem: string,
  keyPem: string,
): Promise<{ ofCert: string; ofKey: string }> {
  const files = { 'cert.pem': certPem, 'key.pem': keyPem };
  const ofCert = await openssl(['x509', '-noout', '-pubkey', '-in', 'cert.pem'], files);
  const ofKey = await openssl(['pkey', '-in', 'key.pem', '-pubout'], files);
  if (ofCert.code !== 0 || ofKey.code !== 0)
    throw new Error(`openssl failed: ${ofCert.stderr}${ofKey.stderr}`);
  return { ofCert: ofCert.stdout, ofKey: ofKey.stdout };
}

/** `openssl verify -CAfile ca.pem cert.pem`, at `at` (default: now). */
export function verify(caPem: string, certPem: string, options: { at?: Date; purpose?: string } = {}) {
  const args = ['verify', '-CAfile', 'ca.pem'];
  if (options.at) args.push('-attime', String(Math.floor(options.at.getTime() / 1000)));
  if (options.purpose) args.push('-purpose', options.purpose);
  return openssl([...args, 'cert.pem'], { 'ca.pem': caPem, 'cert.pem': certPem });
}

/** The validity dates as `openssl x509 -dates` prints them. */
export async function certificateDates(certPem: string): Promise<{ notBefore: Date; notAfter: Date }> {
  const result = await openssl(['x509', '-noout', '-dates', '-dateopt', 'iso_8601', '-in', 'cert.pem'], {
    'cert.pem': certPem,
  });
  const field = (name: string) => {
    const match = new RegExp(`^${name}=(.+)$`, 'm').exec(result.stdout);
    if (!match) throw new Error(`openssl printed no ${name}: ${result.stdout}${result.stderr}`);
    return new Date(match[1]!.trim());
  };
  return { notBefore: field('notBefore'), notAfter: field('notAfter') };
}

/**
 * A TLS handshake from a client trusting only `caPem` to a server using the pair;
 * resolves 'ok' or the client's error code.
 */
export async function handshake(
  pair: { certPem: string; keyPem: string },
  client: { caPem: string; servername?: string },
): Promise<string> {
  const server = createServer({ cert: pair.certPem, key: pair.keyPem }, (socket) => socket.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    return await new Promise<string>((resolve) => {
      const socket = connect(
        { host: '127.0.0.1', port, ca: client.caPem, servername: client.servername },
        () => {
          socket.end();
          resolve('ok');
        },
      );
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/** A pino logger that keeps its records, for asserting on what was logged. */
export function collectingLogger(): {
  logger: Logger;
  records: LogRecord[];
  messages: (level?: string) => string[];
} {
  const records: LogRecord[] = [];
  const logger = pino(
    { level: 'debug' },
    { write: (line: string) => void records.push(JSON.parse(line) as LogRecord) },
  );
  const levels: Record<string, number> = { debug: 20, info: 30, warn: 40, error: 50 };
  return {
    logger,
    records,
    messages: (level) =>
      records.filter((r) => level === undefined || r.level === levels[level]).map((r) => r.msg),
  };
}

export interface LogRecord {
  level: number;
  msg: string;
  err?: { message: string };
  [key: string]: unknown;
}
