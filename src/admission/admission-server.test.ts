import { X509Certificate } from 'node:crypto';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { admissionHandler } from './admission-handler.js';
import { startAdmissionServer, type AdmissionServer } from './admission-server.js';
import { reviewGovernedRequest } from './governance-review.js';
import type { ServingCertificates, ServingPair } from './serving-certificates.js';
import { createCertificateAuthority } from './tls/certificate-authority.js';
import type { IssuedCertificate } from './tls/issued-certificate.js';
import { issueServingCertificate } from './tls/serving-certificate.js';
import { collectingLogger } from './tls/test-fixtures.js';
import { governedWorld, type GovernedWorld } from './test-governance.js';
import { configMapRequest } from './test-requests.js';

/** A ServingCertificates whose pair the test swaps, telling the listeners each time. */
class SwappableCertificates implements ServingCertificates {
  readonly listeners = new Set<() => void>();
  constructor(private pair: ServingPair | undefined) {}
  current = () => this.pair;
  caBundle = () => undefined;
  onChange(listener: () => void) {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }
  set(pair: ServingPair | undefined) {
    this.pair = pair;
    for (const listener of this.listeners) listener();
  }
  start = () => Promise.resolve();
  close = () => Promise.resolve();
}

interface Answer {
  status: number;
  body: any;
  /** SHA-256 fingerprint of the certificate the server presented. */
  served: string;
  keepAlive: string | string[] | undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fingerprint = (pair: ServingPair) => new X509Certificate(pair.certPem).fingerprint256;
const REVIEW = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: configMapRequest({ uid: 'over-https' }),
});

/**
 * Runs `action`, noting the timers it sets through the globals (Node's own sockets use
 * internal ones): left() counts those it neither cleared nor saw fire.
 */
function timersLeftBy(action: () => Promise<void>): { done: Promise<void>; left: () => number } {
  const live = new Set<unknown>();
  const real = { setTimeout, setInterval, clearTimeout, clearInterval };
  const track =
    <F extends (...args: any[]) => any>(set: F, once: boolean) =>
    (fn: () => void, ms?: number) => {
      const timer = set(() => {
        if (once) live.delete(timer);
        fn();
      }, ms);
      live.add(timer);
      return timer;
    };
  const untrack =
    <F extends (timer: any) => void>(clear: F) =>
    (timer: unknown) => {
      live.delete(timer);
      clear(timer);
    };
  vi.spyOn(globalThis, 'setTimeout').mockImplementation(track(real.setTimeout, true) as any);
  vi.spyOn(globalThis, 'setInterval').mockImplementation(track(real.setInterval, false) as any);
  vi.spyOn(globalThis, 'clearTimeout').mockImplementation(untrack(real.clearTimeout));
  vi.spyOn(globalThis, 'clearInterval').mockImplementation(untrack(real.clearInterval));
  const done = action().finally(() => vi.restoreAllMocks());
  return { done, left: () => live.size };
}

/** The admission HTTPS server on an ephemeral port, with the real handler and reviewers. */
describe('startAdmissionServer', () => {
  let world: GovernedWorld;
  let ca: IssuedCertificate;
  let otherCa: IssuedCertificate;
  let serving: IssuedCertificate;
  let renewed: IssuedCertificate;
  let certificates: SwappableCertificates;
  let logs: ReturnType<typeof collectingLogger>;
  let server: AdmissionServer | undefined;

  beforeEach(async () => {
    const now = new Date();
    [ca, otherCa] = await Promise.all([
      createCertificateAuthority({ commonName: 'arbiter-ca@1', now, validitySeconds: 600 }),
      createCertificateAuthority({ commonName: 'arbiter-ca@2', now, validitySeconds: 600 }),
    ]);
    const names = { dnsNames: ['arbiter.arbiter-system.svc'], ipAddresses: ['127.0.0.1'], now };
    [serving, renewed] = await Promise.all([
      issueServingCertificate(ca, { ...names, validitySeconds: 300 }),
      issueServingCertificate(otherCa, { ...names, validitySeconds: 300 }),
    ]);
    certificates = new SwappableCertificates(serving);
    logs = collectingLogger();
    world = await governedWorld();
    server = undefined;
  });

  afterEach(async () => {
    await server?.close();
    await world.close();
  });

  const start = (closeGraceMs = 10_000) =>
    startAdmissionServer({
      port: 0,
      host: '127.0.0.1',
      certificates,
      handler: admissionHandler({
        reviewers: {
          configuration: () => {
            throw new Error('not used');
          },
          governance: (req) => reviewGovernedRequest(req, world.deps),
        },
        ready: () => true,
        observer: { answered: () => undefined },
        logger: logs.logger,
      }),
      logger: logs.logger,
      closeGraceMs,
    });

  /** POSTs `body` in two parts; the second is sent once `between` resolves. */
  function post(
    port: number,
    options: { trust?: IssuedCertificate[]; agent?: Agent; body?: string; between?: Promise<unknown> } = {},
  ): Promise<Answer> {
    const body = options.body ?? REVIEW;
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/validate/governance',
          method: 'POST',
          ca: (options.trust ?? [ca, otherCa]).map((c) => c.certPem),
          agent: options.agent ?? false,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const served = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              body: JSON.parse(text),
              served,
              keepAlive: res.headers['keep-alive'],
            }),
          );
        },
      );
      req.once('error', reject);
      const half = Math.floor(body.length / 2);
      req.write(body.slice(0, half));
      void (options.between ?? Promise.resolve()).then(() => req.end(body.slice(half)));
    });
  }
  const renewals = () =>
    logs
      .messages('info')
      .filter((m) => m === 'admission serving certificate renewed; new connections use it');
  const loadFailures = () =>
    logs
      .messages('error')
      .filter((m) => m === 'the new admission serving certificate does not load; keeping the old one');

  it('answers AdmissionReviews over HTTPS with the current certificate, on the port it reports', async () => {
    server = await start();
    expect(server.port).toBeGreaterThan(0);
    const answer = await post(server.port, { trust: [ca] });
    expect(answer).toEqual({
      status: 200,
      body: {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: { uid: 'over-https', allowed: true },
      },
      served: fingerprint(serving),
      keepAlive: undefined,
    });
    expect(logs.records).toContainEqual(
      expect.objectContaining({
        admission_port: server.port,
        msg: `admission webhooks listening on port ${server.port} (HTTPS)`,
      }),
    );
  });

  it('does not start without a serving certificate', async () => {
    certificates = new SwappableCertificates(undefined);
    await expect(start()).rejects.toThrow('no serving certificate for the admission webhooks yet');
  });

  it('fails to start on a port that is taken', async () => {
    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      const attempt = startAdmissionServer({
        port,
        host: '127.0.0.1',
        certificates,
        handler: () => undefined,
        logger: logs.logger,
        closeGraceMs: 100,
      });
      await expect(attempt).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('serves a renewed certificate to new connections, without a restart', async () => {
    server = await start();
    certificates.set(renewed);
    expect(renewals()).toHaveLength(1);
    expect((await post(server.port, { trust: [otherCa] })).served).toBe(fingerprint(renewed));
    // A change that leaves the pair as it is (a new CA bundle) swaps nothing.
    certificates.set({ certPem: renewed.certPem, keyPem: renewed.keyPem });
    expect(renewals()).toHaveLength(1);
    certificates.set(serving);
    expect(renewals()).toHaveLength(2);
    expect((await post(server.port, { trust: [ca] })).served).toBe(fingerprint(serving));
    expect(loadFailures()).toEqual([]);
  });

  it('keeps the old certificate when the new pair does not load, and takes the next good one', async () => {
    server = await start();
    // The served certificate with a key that is not its own, then garbage.
    certificates.set({ certPem: serving.certPem, keyPem: renewed.keyPem });
    certificates.set({ certPem: 'garbage', keyPem: 'garbage' });
    expect(loadFailures()).toHaveLength(2);
    expect(logs.records.filter((r) => r.level === 50).every((r) => typeof r.err?.message === 'string')).toBe(
      true,
    );
    certificates.set(undefined);
    expect(loadFailures()).toHaveLength(2);
    expect(renewals()).toEqual([]);
    expect((await post(server.port, { trust: [ca] })).served).toBe(fingerprint(serving));
    certificates.set(renewed);
    expect(renewals()).toHaveLength(1);
    expect((await post(server.port, { trust: [otherCa] })).served).toBe(fingerprint(renewed));
  });

  it('on close: answers the review under way, is not held up by idle kept-alive connections, stops listening and leaves no timer', async () => {
    const started = await start(3_000);
    const agent = new Agent({ keepAlive: true });
    try {
      // Kept alive longer than the API server's Go client keeps idle connections (90 s).
      expect((await post(started.port, { agent })).keepAlive).toBe('timeout=120'); // leaves an idle connection
      let sendRest: () => void = () => undefined;
      const underWay = post(started.port, { agent, between: new Promise<void>((r) => (sendRest = r)) });
      await sleep(50);
      const t0 = Date.now();
      const timers = timersLeftBy(() => started.close());
      const closed = timers.done;
      sendRest();
      expect((await underWay).body.response).toEqual({ uid: 'over-https', allowed: true });
      await closed;
      expect(Date.now() - t0).toBeLessThan(2_000);
      // Nothing left to keep the process alive after a shutdown.
      expect(timers.left()).toBe(0);
      await expect(post(started.port)).rejects.toThrow(/ECONNREFUSED/);
      // No longer listening for certificate changes either.
      expect(certificates.listeners.size).toBe(0);
      certificates.set(renewed);
      expect(renewals()).toEqual([]);
    } finally {
      agent.destroy();
    }
  });

  it('on close: drops a connection still busy past the grace', async () => {
    const started = await start(100);
    const stalled = post(started.port, { between: new Promise(() => undefined) });
    const failed = expect(stalled).rejects.toThrow(/socket hang up|ECONNRESET/);
    await sleep(50);
    const t0 = Date.now();
    await Promise.race([started.close(), sleep(2_000)]);
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(90);
    expect(elapsed).toBeLessThan(2_000);
    await failed;
  });
});
