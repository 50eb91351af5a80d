import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readCertificate } from './read-certificate.js';
import { caBundle } from './renewal.js';
import { rotate, type CertificateState, type RotationSettings } from './rotation.js';
import { verify } from './test-fixtures.js';

const T0 = Date.UTC(2030, 0, 1);
const at = (seconds: number) => new Date(T0 + seconds * 1000);

const settings: RotationSettings = {
  caCommonName: 'arbiter-admission-ca',
  names: { dnsNames: ['arbiter.arbiter-system.svc'], ipAddresses: ['127.0.0.1'] },
  caValiditySeconds: 300,
  certValiditySeconds: 60,
  propagationDelayMs: 10_000,
};

async function created(now = at(0), withSettings = settings): Promise<CertificateState> {
  const step = await rotate(undefined, now, withSettings);
  return step!.state;
}

/** The unexpired CA of the bundle that signed the serving certificate, if any (Node's OpenSSL decides). */
function trustedIssuer(state: CertificateState, now: Date) {
  const serving = new X509Certificate(state.serving.certPem);
  return state.bundle.find(
    (ca) => ca.notAfter > now && serving.verify(new X509Certificate(ca.certPem).publicKey),
  );
}

describe('rotate', () => {
  it('creates a CA and a serving certificate it signed; the bundle holds the CA', async () => {
    const state = await created();

    expect(state.nextCa).toBeUndefined();
    expect(state.bundle).toEqual([{ certPem: state.signingCa.certPem, notAfter: state.signingCa.notAfter }]);
    expect(readCertificate(state.serving.certPem, 'serving')).toMatchObject(settings.names);
    expect(readCertificate(state.signingCa.certPem, 'ca').isCa).toBe(true);
    expect((await verify(caBundle(state.bundle, at(1)), state.serving.certPem, { at: at(1) })).code).toBe(0);
  });

  it('says it created a CA and a serving certificate', async () => {
    const step = await rotate(undefined, at(0), settings);
    expect(step?.changes).toEqual(['created a CA and a serving certificate']);
  });

  it('starts over at the very instant the signing CA expires', async () => {
    const state = await created();
    const step = await rotate(state, state.signingCa.notAfter, settings);
    expect(step?.changes).toEqual([
      'the signing CA has expired: created a new CA and serving certificate at once',
    ]);
  });

  it('starts over when a pending CA has expired as well', async () => {
    const slow = { ...settings, propagationDelayMs: 1_000_000 };
    const pending = (await rotate(await created(), at(190), slow))!.state;
    const expiry = pending.nextCa!.notAfter;
    for (const now of [expiry, new Date(expiry.getTime() + 1000)]) {
      const step = await rotate(pending, now, slow);
      expect(step?.changes).toEqual([
        'the signing CA has expired: created a new CA and serving certificate at once',
      ]);
      expect(step!.state.signingCa.certPem).not.toBe(pending.nextCa!.certPem);
    }
  });

  it('does nothing while nothing is due', async () => {
    const state = await created();
    expect(await rotate(state, at(1), settings)).toBeUndefined();
    expect(await rotate(state, at(37), settings)).toBeUndefined();
  });

  it('renews the serving certificate at two thirds of its lifetime, from the same CA', async () => {
    const state = await created();
    // 60 s validity backdated by 6 s: lifetime 66 s from -6 s, due at 38 s.
    const step = await rotate(state, at(38), settings);

    expect(step?.changes).toEqual(['issued a new serving certificate (two thirds of its lifetime passed)']);
    expect(step!.state.signingCa).toBe(state.signingCa);
    expect(step!.state.serving.certPem).not.toBe(state.serving.certPem);
    expect(step!.state.serving.notAfter).toEqual(at(98));
  });

  it('reissues the serving certificate when the names change', async () => {
    const state = await created();
    const renamed = { ...settings, names: { dnsNames: ['arbiter.other.svc'], ipAddresses: [] } };
    const step = await rotate(state, at(1), renamed);

    expect(step?.changes).toEqual(['issued a new serving certificate (the names changed)']);
    expect(readCertificate(step!.state.serving.certPem, 'serving')).toMatchObject(renamed.names);
  });

  it('starts over when the signing CA has expired', async () => {
    const state = await created();
    const step = await rotate(state, at(301), settings);

    expect(step?.changes).toEqual([
      'the signing CA has expired: created a new CA and serving certificate at once',
    ]);
    expect(step!.state.signingCa.certPem).not.toBe(state.signingCa.certPem);
    expect(step!.state.bundle).toHaveLength(1);
  });

  it('rotates the CA through the bundle first, keeping the old CA until it expires', async () => {
    let state = await created();
    const firstCa = state.signingCa;
    const inBundleSince = new Map<string, number>([[firstCa.certPem, 0]]);
    const signedSince = new Map<string, number>([[firstCa.certPem, 0]]);
    const log: string[] = [];

    for (let t = 5; t <= 700; t += 5) {
      const now = at(t);
      const step = await rotate(state, now, settings);
      if (step) {
        state = step.state;
        log.push(...step.changes.map((change) => `${t}: ${change}`));
      }
      for (const ca of state.bundle) if (!inBundleSince.has(ca.certPem)) inBundleSince.set(ca.certPem, t);
      if (!signedSince.has(state.signingCa.certPem)) signedSince.set(state.signingCa.certPem, t);

      // At every moment the served certificate is valid and signed by a CA of the bundle.
      expect(state.serving.notBefore <= now && now < state.serving.notAfter, `serving valid at ${t}`).toBe(
        true,
      );
      expect(trustedIssuer(state, now), `serving trusted at ${t}`).toBeDefined();
      // No expired CA stays in the bundle; no CA leaves it before it expires.
      expect(state.bundle.every((ca) => ca.notAfter > now)).toBe(true);
      expect(state.bundle.some((ca) => ca.certPem === firstCa.certPem)).toBe(firstCa.notAfter > now);
    }

    // A new CA signs only once it has been in the bundle for the propagation delay.
    for (const [ca, since] of signedSince) {
      if (ca !== firstCa.certPem) expect(since - inBundleSince.get(ca)!).toBeGreaterThanOrEqual(10);
    }
    expect(signedSince.size).toBeGreaterThanOrEqual(3);
    // 300 s CA backdated by 30 s: due at 2/3 of 330 s from -30 s, i.e. 190 s; signs 10 s later.
    expect(log).toContain('190: published a new CA in the bundle; it signs after the propagation delay');
    expect(log).toContain('200: the new CA signs serving certificates from now on');
    expect(log).toContainEqual(expect.stringMatching(/^200: issued a new serving certificate/));
    expect(log).toContain('300: dropped 1 expired CA(s) from the bundle');
    expect(log.some((line) => line.includes('has expired'))).toBe(false);
  });

  it('promotes a pending CA at once when the signing CA expires before the propagation delay', async () => {
    const state = await created();
    const pending = await rotate(state, at(190), { ...settings, propagationDelayMs: 200_000 });
    expect(pending!.state.nextCa).toBeDefined();

    const step = await rotate(pending!.state, at(300), { ...settings, propagationDelayMs: 200_000 });
    expect(step?.changes).toContain('the new CA signs serving certificates from now on');
    expect(step!.state.signingCa.certPem).toBe(pending!.state.nextCa!.certPem);
    expect(trustedIssuer(step!.state, at(300))).toBeDefined();
  });

  it('names each CA after the prefix and the second it was made', async () => {
    const state = await created(at(0));
    expect(new X509Certificate(state.signingCa.certPem).subject).toBe(`CN=arbiter-admission-ca@${T0 / 1000}`);
  });

  it('has a new CA sign a new serving certificate once it takes over', async () => {
    const published = await rotate(await created(), at(190), settings);
    const step = await rotate(published!.state, at(200), settings);
    expect(step?.changes).toEqual([
      'the new CA signs serving certificates from now on',
      'issued a new serving certificate (another CA signs now)',
    ]);
    expect(trustedIssuer(step!.state, at(200))?.certPem).toBe(published!.state.nextCa!.certPem);
  });

  it('compares names case-insensitively, and reissues when only the IP addresses or fewer names are wanted', async () => {
    const state = await created();
    const names = (dnsNames: string[], ipAddresses: string[]) => ({
      ...settings,
      names: { dnsNames, ipAddresses },
    });
    expect(await rotate(state, at(1), names(['Arbiter.Arbiter-System.SVC'], ['127.0.0.1']))).toBeUndefined();
    const upper = names(['Arbiter.Arbiter-System.SVC'], ['127.0.0.1']);
    expect(await rotate(await created(at(0), upper), at(1), settings)).toBeUndefined();
    for (const changed of [
      names(['arbiter.arbiter-system.svc'], ['127.0.0.2']),
      names(['arbiter.arbiter-system.svc'], []),
      names(['arbiter.arbiter-system.svc', 'arbiter'], ['127.0.0.1']),
      names(['arbiter.arbiter-system.svc'], ['127.0.0.9']),
    ])
      expect((await rotate(state, at(1), changed))?.changes).toEqual([
        'issued a new serving certificate (the names changed)',
      ]);
  });

  it('keeps a certificate with several names, and reissues when one of them is replaced', async () => {
    const two = {
      ...settings,
      names: { dnsNames: ['arbiter.arbiter-system.svc', 'arbiter'], ipAddresses: [] },
    };
    const state = await created(at(0), two);
    expect(await rotate(state, at(1), two)).toBeUndefined();
    const replaced = {
      ...two,
      names: { dnsNames: ['arbiter.arbiter-system.svc', 'other'], ipAddresses: [] },
    };
    expect((await rotate(state, at(1), replaced))?.changes).toEqual([
      'issued a new serving certificate (the names changed)',
    ]);
  });
});
