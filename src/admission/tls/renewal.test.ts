import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { caBundle, renewalDue } from './renewal.js';

const at = (seconds: number) => new Date(Date.UTC(2030, 0, 1) + seconds * 1000);

describe('renewalDue', () => {
  it.each([
    [0, false],
    [59, false],
    [59.999, false],
    [60, true],
    [89, true],
    [90, true],
    [1000, true],
  ])('a certificate valid for 90 s, at %s s: %s', (seconds, due) => {
    expect(renewalDue(at(0), at(90), at(seconds))).toBe(due);
  });

  it('never goes back to false as time passes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e9 }), fc.nat(2e9), fc.nat(1e9), (lifetime, t, later) => {
        const [notBefore, notAfter] = [at(0), at(lifetime)];
        if (renewalDue(notBefore, notAfter, at(t)))
          expect(renewalDue(notBefore, notAfter, at(t + later))).toBe(true);
      }),
    );
  });
});

describe('caBundle', () => {
  const ca = (name: string, notAfterSeconds: number) => ({
    certPem: `PEM ${name}\n`,
    notAfter: at(notAfterSeconds),
  });

  it('lists the CAs not yet expired, newest first', () => {
    const bundle = caBundle([ca('old', 100), ca('expired', 50), ca('new', 300), ca('middle', 200)], at(50));
    expect(bundle).toBe('PEM new\nPEM middle\nPEM old\n');
  });

  it('is empty once every CA has expired', () => {
    expect(caBundle([ca('a', 10)], at(10))).toBe('');
  });

  it('ends every PEM with a newline, so concatenated blocks stay separate', () => {
    expect(
      caBundle(
        [
          { certPem: 'A', notAfter: at(2) },
          { certPem: 'B', notAfter: at(1) },
        ],
        at(0),
      ),
    ).toBe('A\nB\n');
  });

  it('does not reorder its input', () => {
    const input = [ca('a', 1), ca('b', 2)];
    caBundle(input, at(0));
    expect(input.map((c) => c.certPem)).toEqual(['PEM a\n', 'PEM b\n']);
  });
});
