import { describe, expect, it } from 'vitest';
import { configurationUpdate, isManagedByArbiter } from './configuration-update.js';
import type { ValidatingWebhookConfiguration } from './validating-webhook-configuration.js';
import { configurationWebhook, type WebhookConfigurationInput } from './webhook-configurations.js';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const input = (overrides: Partial<WebhookConfigurationInput> = {}): WebhookConfigurationInput => ({
  endpoint: { kind: 'url', url: 'https://127.0.0.1:9443' },
  timeoutSeconds: 5,
  caBundlePem: PEM,
  injectCaFrom: undefined,
  ...overrides,
});

/** What the API server sends back: our object plus metadata and fields we do not own. */
function live(from: ValidatingWebhookConfiguration, changes: { caBundle?: string } = {}) {
  const copy = structuredClone(from);
  return {
    ...copy,
    metadata: {
      ...copy.metadata,
      uid: 'u-1',
      resourceVersion: '41',
      creationTimestamp: new Date('2025-01-01T00:00:00Z'),
      managedFields: [{ manager: 'arbiter' }],
      labels: { ...copy.metadata.labels, team: 'platform' },
      annotations: { ...copy.metadata.annotations, note: 'kept' },
    },
    webhooks: copy.webhooks.map((webhook) => ({
      ...webhook,
      clientConfig: { ...webhook.clientConfig, ...changes },
      reinvocationPolicy: 'Never',
      futureField: { x: 1 },
    })),
  };
}

describe('configurationUpdate', () => {
  it('sets the owning ClusterRole when it is named, and never removes an owner when it is not', () => {
    const owner = { name: 'arbiter', uid: 'role-uid-1' };
    const owned = configurationWebhook(input({ owner }));
    const unowned = configurationWebhook(input());
    expect(configurationUpdate(owned, live(unowned))?.metadata.ownerReferences).toEqual([
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'arbiter', uid: 'role-uid-1' },
    ]);
    expect(configurationUpdate(owned, live(owned))).toBeUndefined();
    // A recreated ClusterRole has another uid: the reference follows it.
    const recreated = configurationWebhook(input({ owner: { ...owner, uid: 'role-uid-2' } }));
    expect(configurationUpdate(recreated, live(owned))?.metadata.ownerReferences).toMatchObject([
      { uid: 'role-uid-2' },
    ]);
    expect(configurationUpdate(unowned, live(owned))).toBeUndefined();
  });

  it('writes nothing when the owned fields match (server additions do not count)', () => {
    const desired = configurationWebhook(input());
    expect(configurationUpdate(desired, live(desired))).toBeUndefined();
  });

  it('keeps the live caBundle when ours is undefined (cert-manager fills it in)', () => {
    const desired = configurationWebhook(input({ caBundlePem: undefined }));
    expect(configurationUpdate(desired, live(desired, { caBundle: 'aW5qZWN0ZWQ=' }))).toBeUndefined();
    const changed = configurationUpdate(
      configurationWebhook(input({ caBundlePem: undefined, timeoutSeconds: 9 })),
      live(desired, { caBundle: 'aW5qZWN0ZWQ=' }),
    );
    expect(changed?.webhooks[0]!.clientConfig.caBundle).toBe('aW5qZWN0ZWQ=');
    expect(changed?.webhooks[0]!.timeoutSeconds).toBe(9);
  });

  it('replaces a stale caBundle with ours, keeping the resourceVersion and foreign metadata', () => {
    const desired = configurationWebhook(input());
    const update = configurationUpdate(desired, live(desired, { caBundle: 'b2xk' }));
    expect(update?.webhooks[0]!.clientConfig.caBundle).toBe(Buffer.from(PEM).toString('base64'));
    expect(update?.metadata).toMatchObject({
      name: 'arbiter-configuration',
      resourceVersion: '41',
      uid: 'u-1',
      labels: { 'app.kubernetes.io/managed-by': 'arbiter', team: 'platform' },
      annotations: { note: 'kept' },
    });
    expect(update?.metadata).not.toHaveProperty('managedFields');
    // Only the owned webhook fields are sent: the server fills in its own again.
    expect(update?.webhooks[0]).not.toHaveProperty('futureField');
  });

  it('adds and removes the cert-manager annotation it owns', () => {
    const plain = configurationWebhook(input());
    const injected = configurationWebhook(input({ caBundlePem: undefined, injectCaFrom: 'ns/cert' }));
    const adding = configurationUpdate(injected, live(plain));
    expect(adding?.metadata.annotations).toStrictEqual({
      note: 'kept',
      'cert-manager.io/inject-ca-from': 'ns/cert',
    });
    const removing = configurationUpdate(plain, live(injected, { caBundle: 'eA==' }));
    expect(removing?.metadata.annotations).toStrictEqual({ note: 'kept' });
  });

  it('puts its label back', () => {
    const desired = configurationWebhook(input());
    const relabelled = live(desired);
    relabelled.metadata.labels = { team: 'platform' };
    expect(configurationUpdate(desired, relabelled)?.metadata.labels).toStrictEqual({
      team: 'platform',
      'app.kubernetes.io/managed-by': 'arbiter',
    });
  });

  it('removes a webhook someone added to the list', () => {
    const desired = configurationWebhook(input());
    const extended = live(desired);
    extended.webhooks.push({ ...extended.webhooks[0]!, name: 'extra.example.com' });
    expect(configurationUpdate(desired, extended)?.webhooks.map((w) => w.name)).toStrictEqual([
      'configuration.governance.arbiter.dev',
    ]);
  });
});

describe('configurationUpdate, the details of the replacement', () => {
  it("keeps each webhook's own live caBundle, matched by name", () => {
    const one = configurationWebhook(input({ caBundlePem: undefined }));
    const [first] = one.webhooks;
    const desired = { ...one, webhooks: [first!, { ...first!, name: 'second.arbiter.dev' }] };
    const current = {
      ...structuredClone(desired),
      webhooks: [
        { ...first!, clientConfig: { ...first!.clientConfig, caBundle: 'Zmlyc3Q=' } },
        {
          ...first!,
          name: 'second.arbiter.dev',
          clientConfig: { ...first!.clientConfig, caBundle: 'c2Vjb25k' },
        },
      ],
    };
    expect(configurationUpdate(desired, current)).toBeUndefined();
    const changed = configurationUpdate(
      { ...desired, webhooks: desired.webhooks.map((webhook) => ({ ...webhook, timeoutSeconds: 9 })) },
      current,
    );
    expect(changed?.webhooks.map((webhook) => webhook.clientConfig.caBundle)).toEqual([
      'Zmlyc3Q=',
      'c2Vjb25k',
    ]);
  });

  it('sends no annotations when there are none', () => {
    const desired = configurationWebhook(input());
    const current = structuredClone(desired);
    delete current.metadata.annotations;
    const changed = configurationUpdate(configurationWebhook(input({ timeoutSeconds: 9 })), current);
    expect(changed).toBeDefined();
    expect(changed!.metadata.annotations).toBeUndefined();
  });

  it('sees no change in an empty list the API server leaves out (webhooks, ownerReferences)', () => {
    const desired = { ...configurationWebhook(input()), webhooks: [] };
    const { webhooks: _webhooks, ...current } = structuredClone(desired);
    expect(configurationUpdate(desired, current)).toBeUndefined();
    const withNoOwners = { ...desired, metadata: { ...desired.metadata, ownerReferences: [] } };
    expect(configurationUpdate(withNoOwners, current)).toBeUndefined();
  });
});

describe('isManagedByArbiter', () => {
  it.each([
    [{ 'app.kubernetes.io/managed-by': 'arbiter' }, true],
    [{ 'app.kubernetes.io/managed-by': 'helm' }, false],
    [undefined, false],
  ])('labels %j: %s', (labels, managed) => {
    expect(isManagedByArbiter({ metadata: { name: 'x', labels } })).toBe(managed);
  });
});
