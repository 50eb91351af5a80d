import { describe, expect, it } from 'vitest';
import { parseServeOptions } from './serve-options.js';

const cluster = ['--api-keys', 'k.yaml', '--kubeconfig', 'kc'];
const parse = (...args: string[]) => {
  const options = parseServeOptions([...cluster, ...args], {});
  if (options === 'help') throw new Error('help');
  return options.kubernetes?.admission;
};

describe('admission flags', () => {
  it('leaves the webhooks off without a Service or URL', () => {
    expect(parse()).toBeUndefined();
  });

  it('reads a Service with the defaults of the issue', () => {
    expect(parse('--admission-service', 'arbiter-system/arbiter')).toEqual({
      port: 9443,
      endpoint: { kind: 'service', namespace: 'arbiter-system', name: 'arbiter', port: 443 },
      timeoutSeconds: 5,
      failurePolicy: undefined,
      certificates: {
        kind: 'generated',
        secretName: 'arbiter-admission-tls',
        caValiditySeconds: 365 * 86_400,
        certValiditySeconds: 90 * 86_400,
      },
      ownerClusterRole: undefined,
    });
    expect(
      parse('--admission-service', 'a/b', '--admission-owner-clusterrole', 'arbiter')?.ownerClusterRole,
    ).toBe('arbiter');
    expect(parse('--admission-service', 'ns/svc:8443')?.endpoint).toMatchObject({ port: 8443 });
  });

  it('reads a URL, a failure policy, a timeout and cert-manager certificates', () => {
    const options = parse(
      '--admission-url',
      'https://127.0.0.1:9555',
      '--admission-port',
      '9555',
      '--admission-failure-policy',
      'Fail',
      '--admission-timeout',
      '10',
      '--admission-cert-dir',
      '/tls',
      '--admission-inject-ca-from',
      'arbiter-system/arbiter-admission',
    );
    expect(options).toEqual({
      port: 9555,
      endpoint: { kind: 'url', url: 'https://127.0.0.1:9555' },
      timeoutSeconds: 10,
      failurePolicy: 'Fail',
      certificates: { kind: 'directory', dir: '/tls', injectCaFrom: 'arbiter-system/arbiter-admission' },
      ownerClusterRole: undefined,
    });
  });

  it.each([
    [['--admission-url', 'http://x:1'], /over https, not http:/],
    [['--admission-url', 'https://x:1/path'], /only https:\/\/HOST:PORT/],
    [['--admission-service', 'nonamespace'], /not NAMESPACE\/NAME/],
    [['--admission-service', 'a/b', '--admission-url', 'https://x:1'], /exclude each other/],
    [['--admission-port', '9443'], /needs --admission-service/],
    [['--admission-service', 'a/b', '--admission-timeout', '31'], /admission-timeout: 31/],
    [['--admission-service', 'a/b', '--admission-failure-policy', 'fail'], /must be Fail or Ignore/],
    [['--admission-service', 'a/b', '--admission-inject-ca-from', 'x/y'], /needs --admission-cert-dir/],
    [
      ['--admission-service', 'a/b', '--admission-cert-dir', '/d', '--admission-cert-secret', 's'],
      /makes no sense/,
    ],
  ])('refuses %j with a clear message', (args, message) => {
    expect(() => parse(...args)).toThrow(message);
  });

  it('refuses admission flags without a cluster', () => {
    expect(() =>
      parseServeOptions(['--api-keys', 'k', '--manifests', 'm', '--admission-service', 'a/b'], {}),
    ).toThrow(/--admission-service needs cluster mode/);
  });
});
