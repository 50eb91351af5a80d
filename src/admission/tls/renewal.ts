import { pemText } from './issued-certificate.js';
import type { BundledCertificate } from './read-certificate.js';

/** Share of a certificate's lifetime after which it is renewed. */
export const RENEWAL_FRACTION = 2 / 3;

/** True once two thirds of the lifetime from notBefore to notAfter have passed. */
export function renewalDue(notBefore: Date, notAfter: Date, now: Date): boolean {
  const lifetimeMs = notAfter.getTime() - notBefore.getTime();
  return now.getTime() >= notBefore.getTime() + lifetimeMs * RENEWAL_FRACTION;
}

/**
 * The PEM bundle for the webhook configurations' caBundle: every CA not yet expired,
 * newest (latest notAfter) first. Empty when all have expired.
 */
export function caBundle(cas: readonly BundledCertificate[], now: Date): string {
  return unexpired(cas, now)
    .map((ca) => pemText(ca.certPem))
    .join('');
}

/** The CAs not yet expired at `now`, newest first. */
export function unexpired(cas: readonly BundledCertificate[], now: Date): BundledCertificate[] {
  return cas
    .filter((ca) => ca.notAfter.getTime() > now.getTime())
    .sort((a, b) => b.notAfter.getTime() - a.notAfter.getTime());
}
