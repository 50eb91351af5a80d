import { mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createCertificateAuthority,
  issueServingCertificate,
  type IssuedCertificate,
} from '../admission/tls/index.js';
import { collectingLogger } from '../admission/tls/test-fixtures.js';
import { DirectoryServingCertificates } from './directory-serving-certificates.js';

// readFile, counted: a test waits for the poller to read the files again instead of sleeping.
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, readFile: vi.fn(actual.readFile) };
});

/** How often the poller has started reading DIR/tls.crt. */
const readsOf = (dir: string) =>
  vi.mocked(readFile).mock.calls.filter(([path]) => path === join(dir, 'tls.crt')).length;

/** Resolves once at least `count` polls of `dir` began after the call (polls never overlap). */
async function polls(dir: string, count: number): Promise<void> {
  const target = readsOf(dir) + count + 1;
  await vi.waitFor(() => expect(readsOf(dir)).toBeGreaterThanOrEqual(target), { timeout: 5_000 });
}

/** Writes the pair the way the kubelet updates a mounted Secret: a new folder, then `..data` re-pointed atomically. */
async function kubeletWrite(dir: string, files: { 'tls.crt': string; 'tls.key': string }, version: number) {
  const versionDir = `..version_${version}`;
  await mkdir(join(dir, versionDir));
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, versionDir, name), content);
  await symlink(versionDir, join(dir, '..data_tmp'));
  await rename(join(dir, '..data_tmp'), join(dir, '..data'));
  for (const name of Object.keys(files))
    await symlink(join('..data', name), join(dir, name)).catch(() => undefined);
  if (version > 1) await rm(join(dir, `..version_${version - 1}`), { recursive: true });
}

const files = (pair: IssuedCertificate) => ({ 'tls.crt': pair.certPem, 'tls.key': pair.keyPem });

let first: IssuedCertificate;
let second: IssuedCertificate;

beforeAll(async () => {
  const now = new Date();
  const ca = await createCertificateAuthority({ commonName: 'cert-manager-ca', now, validitySeconds: 600 });
  const names = { dnsNames: ['arbiter.arbiter-system.svc'], ipAddresses: [], now, validitySeconds: 300 };
  [first, second] = await Promise.all([
    issueServingCertificate(ca, names),
    issueServingCertificate(ca, names),
  ]);
});

describe('DirectoryServingCertificates', () => {
  let dir: string;
  let certificates: DirectoryServingCertificates | undefined;
  const log = collectingLogger();

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arbiter-certs-'));
    log.records.length = 0;
  });

  afterEach(async () => {
    await certificates?.close();
    certificates = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  const poller = (folder: string, startTimeoutMs = 5_000) =>
    new DirectoryServingCertificates({
      dir: folder,
      logger: log.logger,
      settings: { pollIntervalMs: 20, startTimeoutMs },
    });
  const open = (startTimeoutMs = 5_000) => (certificates = poller(dir, startTimeoutMs));

  it('serves the mounted pair and leaves the caBundle alone', async () => {
    await kubeletWrite(dir, files(first), 1);
    const certs = open();
    await certs.start();

    expect(certs.current()).toEqual({ certPem: first.certPem, keyPem: first.keyPem });
    expect(certs.caBundle()).toBeUndefined();
  });

  it('swaps in the pair the kubelet re-points ..data to, and tells listeners once', async () => {
    await kubeletWrite(dir, files(first), 1);
    const certs = open();
    await certs.start();
    const listener = vi.fn();
    certs.onChange(listener);

    await kubeletWrite(dir, files(second), 2);
    await vi.waitFor(() => expect(certs.current()?.certPem).toBe(second.certPem));
    expect(certs.current()?.keyPem).toBe(second.keyPem);
    await polls(dir, 2); // the same pair, read again
    expect(listener).toHaveBeenCalledOnce();
  });

  it('keeps the previous pair when the new one is broken, and logs it once', async () => {
    await kubeletWrite(dir, files(first), 1);
    const certs = open();
    await certs.start();

    await kubeletWrite(dir, { 'tls.crt': second.certPem, 'tls.key': first.keyPem }, 2);
    await vi.waitFor(() => expect(log.messages('error')).toHaveLength(1));
    await polls(dir, 2); // the same broken pair, read again
    expect(log.messages('error')).toEqual(['cannot load the admission certificate; keeping the current one']);
    expect(log.records.find((r) => r.level === 50)?.err?.message).toMatch(
      /tls.key does not belong to .*tls.crt/,
    );
    expect(certs.current()?.certPem).toBe(first.certPem);

    await kubeletWrite(dir, { 'tls.crt': 'garbage', 'tls.key': 'garbage' }, 3);
    await vi.waitFor(() => expect(log.messages('error')).toHaveLength(2));
    expect(log.records.filter((r) => r.level === 50)[1]?.err?.message).toMatch(
      /tls.crt is not a PEM certificate/,
    );
    expect(certs.current()?.certPem).toBe(first.certPem);

    await kubeletWrite(dir, files(second), 4);
    await vi.waitFor(() => expect(certs.current()?.certPem).toBe(second.certPem));
  });

  it('waits a bounded time for a missing pair, then picks it up when it appears', async () => {
    const certs = open(50);
    await certs.start();

    expect(certs.current()).toBeUndefined();
    expect(log.messages('warn')).toEqual([
      'no admission serving certificate in the folder yet; still trying',
    ]);
    expect(log.records.find((r) => r.level === 50)?.err?.message).toMatch(/ENOENT/);

    await kubeletWrite(dir, files(first), 1);
    await vi.waitFor(() => expect(certs.current()?.certPem).toBe(first.certPem));
  });

  it('stops reading after close', async () => {
    await kubeletWrite(dir, files(first), 1);
    const certs = open();
    await certs.start();
    await certs.close();
    const readsAtClose = readsOf(dir);

    await kubeletWrite(dir, files(second), 2);
    // Sentinel: a poller on the same interval, started after the close, polls twice more. A
    // timer the closed one left behind would have been due earlier, and fired first.
    const otherDir = await mkdtemp(join(tmpdir(), 'arbiter-certs-'));
    const other = poller(otherDir);
    try {
      await kubeletWrite(otherDir, files(first), 1);
      await other.start();
      await polls(otherDir, 2);
    } finally {
      await other.close();
      await rm(otherDir, { recursive: true, force: true });
    }
    expect(readsOf(dir)).toBe(readsAtClose);
    expect(certs.current()?.certPem).toBe(first.certPem);
  });
});
