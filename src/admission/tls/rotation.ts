import { createCertificateAuthority } from './certificate-authority.js';
import type { IssuedCertificate } from './issued-certificate.js';
import { isIssuedBy, readCertificate, type BundledCertificate } from './read-certificate.js';
import { renewalDue, unexpired } from './renewal.js';
import type { ServingNames } from './san.js';
import { issueServingCertificate } from './serving-certificate.js';

/** Everything the leader keeps: who signs, what is served, what the API server trusts. */
export interface CertificateState {
  serving: IssuedCertificate;
  /** The CA that signs serving certificates now. */
  signingCa: IssuedCertificate;
  /** A newer CA already in the bundle that signs only once the bundle has propagated. */
  nextCa: PendingCa | undefined;
  /** Every CA the API server should trust (signing and next CA included, retired ones until they expire). */
  bundle: BundledCertificate[];
}

export interface PendingCa extends IssuedCertificate {
  /** When it was put into the bundle. */
  publishedAt: Date;
}

export interface RotationSettings {
  /** Prefix of the CAs' common names; each CA adds `@<unix seconds>`, as Kubernetes' own self-signed certificates do. */
  caCommonName: string;
  names: ServingNames;
  caValiditySeconds: number;
  certValiditySeconds: number;
  /**
   * How long a new CA sits in the bundle before it signs: long enough for every replica,
   * the webhook configurations and the API server to trust it.
   */
  propagationDelayMs: number;
}

/** A new state and what changed (for the log). */
export interface RotationStep {
  state: CertificateState;
  changes: string[];
}

/**
 * The leader's one step of certificate upkeep at `now`; undefined when nothing is due.
 * A CA renewal happens in two steps: the new CA joins the bundle first and signs only
 * after `propagationDelayMs`, so a serving certificate never reaches a client that does
 * not trust its issuer yet; the old CA stays in the bundle until it expires.
 */
export async function rotate(
  state: CertificateState | undefined,
  now: Date,
  settings: RotationSettings,
): Promise<RotationStep | undefined> {
  if (!state) {
    return { state: await fresh([], now, settings), changes: ['created a CA and a serving certificate'] };
  }
  if (!canSign(state, now)) {
    return {
      state: await fresh(state.bundle, now, settings),
      changes: ['the signing CA has expired: created a new CA and serving certificate at once'],
    };
  }
  const changes: string[] = [];
  let next = await rotateCa(state, now, settings, changes);
  next = await renewServing(next, now, settings, changes);
  const bundle = unexpired(next.bundle, now);
  if (bundle.length < next.bundle.length) {
    changes.push(`dropped ${next.bundle.length - bundle.length} expired CA(s) from the bundle`);
    next = { ...next, bundle };
  }
  return changes.length > 0 ? { state: next, changes } : undefined;
}

/** Whether the signing CA, or a pending one that can take over, is still valid. */
function canSign(state: CertificateState, now: Date): boolean {
  return state.signingCa.notAfter > now || (state.nextCa !== undefined && state.nextCa.notAfter > now);
}

async function fresh(
  bundle: readonly BundledCertificate[],
  now: Date,
  settings: RotationSettings,
): Promise<CertificateState> {
  const ca = await newCa(now, settings);
  return {
    signingCa: ca,
    nextCa: undefined,
    serving: await issue(ca, now, settings),
    bundle: [bundled(ca), ...unexpired(bundle, now)],
  };
}

async function rotateCa(
  state: CertificateState,
  now: Date,
  settings: RotationSettings,
  changes: string[],
): Promise<CertificateState> {
  const { nextCa, signingCa } = state;
  if (nextCa) {
    const propagated = now.getTime() - nextCa.publishedAt.getTime() >= settings.propagationDelayMs;
    // An expired signing CA cannot wait for propagation: nothing it signs verifies anymore.
    if (!propagated && signingCa.notAfter > now) return state;
    changes.push('the new CA signs serving certificates from now on');
    const { publishedAt: _publishedAt, ...promoted } = nextCa;
    return { ...state, signingCa: promoted, nextCa: undefined };
  }
  if (!renewalDue(signingCa.notBefore, signingCa.notAfter, now)) return state;
  const ca = await newCa(now, settings);
  changes.push('published a new CA in the bundle; it signs after the propagation delay');
  return { ...state, nextCa: { ...ca, publishedAt: now }, bundle: [bundled(ca), ...state.bundle] };
}

async function renewServing(
  state: CertificateState,
  now: Date,
  settings: RotationSettings,
  changes: string[],
): Promise<CertificateState> {
  const reason = servingRenewalReason(state, now, settings);
  if (!reason) return state;
  changes.push(`issued a new serving certificate (${reason})`);
  return { ...state, serving: await issue(state.signingCa, now, settings) };
}

function servingRenewalReason(
  state: CertificateState,
  now: Date,
  settings: RotationSettings,
): string | undefined {
  const { serving, signingCa } = state;
  if (renewalDue(serving.notBefore, serving.notAfter, now)) return 'two thirds of its lifetime passed';
  if (!isIssuedBy(serving.certPem, signingCa.certPem)) return 'another CA signs now';
  // Stryker disable next-line StringLiteral: the label only names an unreadable certificate, and isIssuedBy read it above
  const info = readCertificate(serving.certPem, 'the serving certificate');
  const { dnsNames, ipAddresses } = settings.names;
  if (!sameNames(info.dnsNames, dnsNames) || !sameNames(info.ipAddresses, ipAddresses))
    return 'the names changed';
  return undefined;
}

function sameNames(actual: readonly string[], wanted: readonly string[]): boolean {
  const have = new Set(actual.map((name) => name.toLowerCase()));
  return (
    // Stryker disable next-line MethodExpression: names are service DNS names, URL hosts or IPs: ASCII, where upper and lower case collapse alike
    have.size === new Set(wanted.map((name) => name.toLowerCase())).size &&
    wanted.every((name) => have.has(name.toLowerCase()))
  );
}

function newCa(now: Date, settings: RotationSettings): Promise<IssuedCertificate> {
  return createCertificateAuthority({
    commonName: `${settings.caCommonName}@${Math.floor(now.getTime() / 1000)}`,
    now,
    validitySeconds: settings.caValiditySeconds,
  });
}

function issue(ca: IssuedCertificate, now: Date, settings: RotationSettings): Promise<IssuedCertificate> {
  return issueServingCertificate(ca, {
    ...settings.names,
    now,
    validitySeconds: settings.certValiditySeconds,
  });
}

function bundled(ca: IssuedCertificate): BundledCertificate {
  return { certPem: ca.certPem, notAfter: ca.notAfter };
}
