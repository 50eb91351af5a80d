import { CoreV1Api, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { kubeStatusCode, toArbiterError } from './kube-errors.js';
import { withTimeout } from './with-timeout.js';

/**
 * The Secret calls of one namespace, each bounded in time (a hung API server turns into
 * UNAVAILABLE) and mapped to ArbiterErrors (a lost write race is CONFLICT).
 */
export class Secrets {
  private readonly api: CoreV1Api;

  constructor(
    kubeConfig: KubeConfig,
    readonly namespace: string,
    private readonly timeoutMs: number,
  ) {
    this.api = kubeConfig.makeApiClient(CoreV1Api);
  }

  /** The Secret, or undefined when there is none. */
  async get(name: string): Promise<V1Secret | undefined> {
    try {
      return await withTimeout(
        this.api.readNamespacedSecret({ name, namespace: this.namespace }),
        this.timeoutMs,
        'the API server',
      );
    } catch (err) {
      if (kubeStatusCode(err) === 404) return undefined;
      throw toArbiterError(err, `read Secret ${this.namespace}/${name}`);
    }
  }

  /** Creates the Secret; CONFLICT when it exists already. */
  create(body: V1Secret): Promise<V1Secret> {
    return this.bounded(
      this.api.createNamespacedSecret({ namespace: this.namespace, body }),
      `create Secret ${this.namespace}/${body.metadata?.name ?? ''}`,
    );
  }

  /** Replaces the Secret; `body.metadata.resourceVersion` makes it fail with CONFLICT on a race. */
  replace(body: V1Secret): Promise<V1Secret> {
    const name = body.metadata?.name ?? '';
    return this.bounded(
      this.api.replaceNamespacedSecret({ name, namespace: this.namespace, body }),
      `update Secret ${this.namespace}/${name}`,
    );
  }

  private async bounded<T>(request: Promise<T>, doing: string): Promise<T> {
    try {
      return await withTimeout(request, this.timeoutMs, 'the API server');
    } catch (err) {
      throw toArbiterError(err, doing);
    }
  }
}
