import { CoreV1Api, type V1Secret } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeAll, expect, it, vi } from 'vitest';
import {
  isIssuedBy,
  readCertificate,
  readCertificateBundle,
  servingNames,
} from '../../src/admission/tls/index.js';
import { collectingLogger, handshake, verify } from '../../src/admission/tls/test-fixtures.js';
import { SecretServingCertificates } from '../../src/controller/secret-serving-certificates.js';
import { Secrets } from '../../src/controller/secrets.js';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';

const NAMESPACE = 'arbiter-system';
const names = servingNames({ kind: 'url', url: 'https://127.0.0.1:9443' });

/**
 * SecretServingCertificates against a real kube-apiserver: a leader and a follower
 * sharing one Secret, with lifetimes of seconds so that renewals happen during the test.
 */
describeWithControlPlane('admission serving certificates kept in a Secret', (controlPlane) => {
  const opened: SecretServingCertificates[] = [];
  const core = () => controlPlane().makeKubeConfig().makeApiClient(CoreV1Api);
  const readSecret = async (name: string): Promise<V1Secret | undefined> => {
    try {
      return await core().readNamespacedSecret({ name, namespace: NAMESPACE });
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  };

  function open(options: {
    secretName: string;
    leader: boolean;
    caValiditySeconds?: number;
    certValiditySeconds?: number;
    startTimeoutMs?: number;
    secrets?: Secrets;
  }) {
    const log = collectingLogger();
    const certificates = new SecretServingCertificates({
      secrets: options.secrets ?? new Secrets(controlPlane().makeKubeConfig(), NAMESPACE, 5_000),
      secretName: options.secretName,
      names,
      caValiditySeconds: options.caValiditySeconds ?? 3600,
      certValiditySeconds: options.certValiditySeconds ?? 600,
      isLeader: () => options.leader,
      clock: () => new Date(),
      logger: log.logger,
      settings: {
        pollIntervalMs: 200,
        propagationDelayMs: 1_000,
        startTimeoutMs: options.startTimeoutMs ?? 10_000,
      },
    });
    opened.push(certificates);
    return { certificates, log };
  }

  beforeAll(async () => {
    await core().createNamespace({ body: { metadata: { name: NAMESPACE } } });
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((c) => c.close()));
  });

  it('the leader creates the Secret; a follower that started first loads the same pair', async () => {
    const follower = open({ secretName: 'shared', leader: false, startTimeoutMs: 300 });
    await follower.certificates.start();
    expect(follower.certificates.current()).toBeUndefined();
    expect(await readSecret('shared')).toBeUndefined();
    expect(follower.log.messages('warn')).toContain(
      'the certificate Secret does not exist yet; the leader creates it',
    );

    const leader = open({ secretName: 'shared', leader: true });
    await leader.certificates.start();
    const pair = leader.certificates.current()!;
    const bundle = leader.certificates.caBundle()!;
    await vi.waitFor(() => expect(follower.certificates.current()).toEqual(pair));
    expect(follower.certificates.caBundle()).toBe(bundle);

    const secret = (await readSecret('shared'))!;
    expect(secret.type).toBe('kubernetes.io/tls');
    expect(Object.keys(secret.data ?? {}).sort()).toEqual([
      'ca-signing.crt',
      'ca-signing.key',
      'ca.crt',
      'tls.crt',
      'tls.key',
    ]);
    expect((await verify(bundle, pair.certPem, { purpose: 'sslserver' })).stdout).toContain('cert.pem: OK');
    expect(readCertificate(pair.certPem, 'served').ipAddresses).toEqual(['127.0.0.1']);
    expect(await handshake(pair, { caPem: bundle })).toBe('ok');
    expect(leader.log.messages('info')).toContain('admission certificates updated');
  });

  it('renews the serving certificate and then the CA; every served certificate verifies against the bundle throughout', async () => {
    // CA: 12 s (renewed after ~8 s, signing 1 s later); serving certificates: 4 s (renewed after ~2.7 s).
    const lifetimes = { caValiditySeconds: 12, certValiditySeconds: 4 };
    const leader = open({ secretName: 'short-lived', leader: true, ...lifetimes });
    const follower = open({ secretName: 'short-lived', leader: false, ...lifetimes });
    await leader.certificates.start();
    await follower.certificates.start();
    const firstCa = readCertificateBundle(leader.certificates.caBundle()!, 'bundle')[0]!;

    const served = { leader: new Set<string>(), follower: new Set<string>() };
    const bundleSizes = new Set<number>();
    /** Per CA, the first sample that saw it in the bundle, and when the sample before it was taken. */
    const caFirstInBundle = new Map<string, { sample: number; absentAt: number }>();
    /** Per CA, the first sample that saw a certificate it signed served, and when. */
    const caFirstSigning = new Map<string, { sample: number; at: number }>();
    const problems: string[] = [];
    // Sampled every 100 ms (pacing, not a wait) until the first CA, expired, has left the
    // leader's bundle; the deadline only bounds the loop.
    const deadline = firstCa.notAfter.getTime() + 15_000;
    let firstCaGone = false;
    let previousSampleAt = Date.now();
    for (let sample = 0; !firstCaGone && Date.now() < deadline; sample += 1) {
      const now = new Date();
      const bundle = readCertificateBundle(leader.certificates.caBundle()!, 'leader bundle');
      firstCaGone = !bundle.some((ca) => ca.certPem === firstCa.certPem);
      bundleSizes.add(bundle.length);
      for (const ca of bundle)
        if (!caFirstInBundle.has(ca.certPem))
          caFirstInBundle.set(ca.certPem, { sample, absentAt: previousSampleAt });
      for (const [who, certificates] of [
        ['leader', leader.certificates],
        ['follower', follower.certificates],
      ] as const) {
        const { certPem } = certificates.current()!;
        served[who].add(certPem);
        // What the API server sees: this replica's certificate, checked against the leader's caBundle.
        const issuer = bundle.find((ca) => ca.notAfter > now && isIssuedBy(certPem, ca.certPem));
        const info = readCertificate(certPem, `${who} certificate`);
        if (!issuer)
          problems.push(`${now.toISOString()}: the ${who}'s certificate is not signed by a CA of the bundle`);
        else if (!caFirstSigning.has(issuer.certPem))
          caFirstSigning.set(issuer.certPem, { sample, at: now.getTime() });
        if (!(info.notBefore <= now && now < info.notAfter)) {
          problems.push(`${now.toISOString()}: the ${who}'s certificate is not valid now`);
        }
      }
      previousSampleAt = now.getTime();
      await sleep(100);
    }

    expect(problems).toEqual([]);
    // Serving certificates were renewed several times, and the follower swapped them in too.
    expect(served.leader.size).toBeGreaterThanOrEqual(3);
    expect(served.follower.size).toBeGreaterThanOrEqual(3);
    // A second CA joined the bundle before it signed anything; the first one left it once expired.
    expect(caFirstInBundle.size).toBe(2);
    expect(bundleSizes).toEqual(new Set([1, 2]));
    const [, secondCa] = [...caFirstInBundle.keys()];
    const joined = caFirstInBundle.get(secondCa!)!;
    const signing = caFirstSigning.get(secondCa!)!;
    expect(signing.sample).toBeGreaterThan(joined.sample);
    // It waited there about the propagation delay (1 s; rotation.test.ts checks its length on a
    // simulated clock). Measured from the last sample without it: a late sample can only
    // lengthen this, never shorten it.
    expect(signing.at - joined.absentAt).toBeGreaterThanOrEqual(500);
    const finalBundle = leader.certificates.caBundle()!;
    expect(finalBundle).not.toContain(firstCa.certPem.trim());
    await vi.waitFor(() => expect(follower.certificates.caBundle()).toBe(leader.certificates.caBundle()));
    const pair = follower.certificates.current()!;
    expect(await handshake(pair, { caPem: follower.certificates.caBundle()! })).toBe('ok');
    expect(leader.log.messages('info')).toEqual(
      expect.arrayContaining(['admission certificates updated', 'serving a new admission certificate']),
    );
    expect(leader.log.messages('error')).toEqual([]);
    expect(follower.log.messages('error')).toEqual([]);
  }, 60_000);

  it('a leader that lost a write race reads the winner’s Secret instead of overwriting it', async () => {
    const winner = open({ secretName: 'raced', leader: true });
    await winner.certificates.start();
    // The loser read before the winner created the Secret: its create meets AlreadyExists (409).
    const stale = new Secrets(controlPlane().makeKubeConfig(), NAMESPACE, 5_000);
    let first = true;
    const get = stale.get.bind(stale);
    stale.get = async (name: string): Promise<V1Secret | undefined> => {
      if (!first) return get(name);
      first = false;
      return undefined;
    };
    const loser = open({ secretName: 'raced', leader: true, secrets: stale });
    await loser.certificates.start();

    expect(loser.certificates.current()).toEqual(winner.certificates.current());
    expect(loser.log.messages('info')).toContain('the certificate Secret changed under us; reading it again');
    expect(loser.log.messages('info')).not.toContain('admission certificates updated');
  });

  it('a replace with an old resourceVersion is refused, and the leader re-reads', async () => {
    const first = open({ secretName: 'versioned', leader: true });
    await first.certificates.start();
    const original = (await readSecret('versioned'))!;
    await first.certificates.close();
    // Someone else updates the Secret (resourceVersion moves on) after our leader's read.
    const bumped = {
      ...original,
      metadata: { ...original.metadata, labels: { ...original.metadata?.labels, bumped: 'yes' } },
    };
    await core().replaceNamespacedSecret({ name: 'versioned', namespace: NAMESPACE, body: bumped });
    const stale = new Secrets(controlPlane().makeKubeConfig(), NAMESPACE, 5_000);
    const get = stale.get.bind(stale);
    let reads = 0;
    // First read: the old version with its tls.crt dropped, so the leader wants to write.
    stale.get = async (name: string) => {
      reads += 1;
      if (reads > 1) return get(name);
      const { 'tls.crt': _dropped, ...data } = original.data ?? {};
      return { ...original, data };
    };
    const second = open({ secretName: 'versioned', leader: true, secrets: stale });
    await second.certificates.start();

    expect(second.log.messages('info')).toContain(
      'the certificate Secret changed under us; reading it again',
    );
    expect(second.certificates.current()?.certPem).toBe(
      Buffer.from(original.data!['tls.crt']!, 'base64').toString(),
    );
    expect((await readSecret('versioned'))?.metadata?.labels?.bumped).toBe('yes');
  });

  it('a follower keeps its pair when the Secret breaks; the leader replaces the broken Secret', async () => {
    const leader = open({ secretName: 'broken', leader: true });
    await leader.certificates.start();
    await leader.certificates.close();
    const follower = open({ secretName: 'broken', leader: false });
    await follower.certificates.start();
    const before = follower.certificates.current();

    const secret = (await readSecret('broken'))!;
    secret.data = { ...secret.data, 'tls.crt': Buffer.from('garbage').toString('base64') };
    await core().replaceNamespacedSecret({ name: 'broken', namespace: NAMESPACE, body: secret });
    await vi.waitFor(() =>
      expect(follower.log.messages('error')).toEqual([
        'the certificate Secret is unusable; keeping the current certificate',
      ]),
    );
    expect(follower.certificates.current()).toEqual(before);

    const replacement = open({ secretName: 'broken', leader: true });
    await replacement.certificates.start();
    expect(replacement.log.messages('error')).toEqual([
      'the certificate Secret is unusable; replacing it with a new CA',
    ]);
    await vi.waitFor(() =>
      expect(follower.certificates.current()).toEqual(replacement.certificates.current()),
    );
    expect(follower.certificates.current()).not.toEqual(before);
  });
});
