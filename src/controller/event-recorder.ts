import { randomBytes } from 'node:crypto';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { API_VERSION, type Kind } from '../model/index.js';
import type { RawObject } from './resources.js';

/**
 * Kubernetes Events (core/v1, which every version serves) about configuration objects.
 * Events of a namespaced object (NamespacedPolicy, NamespacedActorGrant) go to its own
 * namespace, where its team and `kubectl describe -n` find them; those of cluster-scoped
 * objects to `default`, where `kubectl describe` looks for them.
 */
/** Where events about cluster-scoped objects go. */
const CLUSTER_EVENTS_NAMESPACE = 'default';

export class EventRecorder {
  private readonly api: CoreV1Api;

  constructor(
    kubeConfig: KubeConfig,
    private readonly deps: { component: string; instance: string; logger: Logger; clock: () => Date },
  ) {
    this.api = kubeConfig.makeApiClient(CoreV1Api);
  }

  /** Best effort: an event that cannot be written is logged, never fatal. */
  async warning(kind: Kind, raw: RawObject, reason: string, message: string): Promise<void> {
    const name = raw.metadata?.name ?? '';
    const objectNamespace = raw.metadata?.namespace;
    const namespace = objectNamespace ?? CLUSTER_EVENTS_NAMESPACE;
    const now = this.deps.clock();
    try {
      await this.api.createNamespacedEvent({
        namespace,
        body: {
          metadata: { name: `${name}.${randomBytes(8).toString('hex')}`, namespace },
          involvedObject: {
            apiVersion: API_VERSION,
            kind,
            ...(objectNamespace === undefined ? {} : { namespace: objectNamespace }),
            name,
            ...(raw.metadata?.uid ? { uid: raw.metadata.uid } : {}),
            ...(raw.metadata?.resourceVersion ? { resourceVersion: raw.metadata.resourceVersion } : {}),
          },
          reason,
          message: message.slice(0, 1024),
          type: 'Warning',
          source: { component: this.deps.component },
          reportingComponent: this.deps.component,
          reportingInstance: this.deps.instance,
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
    } catch (err) {
      this.deps.logger.warn({ err, kind, namespace, name, reason }, 'could not record a Kubernetes event');
    }
  }
}
