import { describe, expect, it } from 'vitest';
import type { AdmissionEndpoint } from '../admission-settings.js';
import { InvalidCertificateError } from './certificate-error.js';
import { servingNames } from './san.js';

describe('servingNames', () => {
  it('names a Service the way in-cluster clients and the API server dial it', () => {
    expect(
      servingNames({ kind: 'service', namespace: 'arbiter-system', name: 'arbiter', port: 443 }),
    ).toEqual({
      dnsNames: [
        'arbiter',
        'arbiter.arbiter-system',
        'arbiter.arbiter-system.svc',
        'arbiter.arbiter-system.svc.cluster.local',
      ],
      ipAddresses: [],
    });
  });

  it.each<[string, { dnsNames: string[]; ipAddresses: string[] }]>([
    ['https://127.0.0.1:9443', { dnsNames: [], ipAddresses: ['127.0.0.1'] }],
    ['https://[::1]:9443', { dnsNames: [], ipAddresses: ['::1'] }],
    ['https://[fd00:0:0::1]', { dnsNames: [], ipAddresses: ['fd00::1'] }],
    ['https://webhook.example.com:8443/base', { dnsNames: ['webhook.example.com'], ipAddresses: [] }],
    ['https://WebHook.Example.COM', { dnsNames: ['webhook.example.com'], ipAddresses: [] }],
    ['https://localhost', { dnsNames: ['localhost'], ipAddresses: [] }],
  ])('the URL %s', (url, names) => {
    expect(servingNames({ kind: 'url', url })).toEqual(names);
  });

  it.each(['not a url', '', 'https://', 'file:///tmp/x'])('refuses the URL %j with a clear error', (url) => {
    const endpoint: AdmissionEndpoint = { kind: 'url', url };
    expect(() => servingNames(endpoint)).toThrow(InvalidCertificateError);
    expect(() => servingNames(endpoint)).toThrow(/the admission URL .* (is not a URL|has no host)/);
  });

  it("keeps the URL parser's error as the cause", () => {
    let thrown: unknown;
    try {
      servingNames({ kind: 'url', url: 'not a url' });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidCertificateError);
    expect((thrown as Error).cause).toBeInstanceOf(TypeError);
  });
});
