import {
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { namedIn as named } from '../governance/config-writer.js';
import { API_GROUP, type Kind } from '../model/index.js';
import { toArbiterError } from './kube-errors.js';
import { withTimeout } from './with-timeout.js';
import { API_GROUP_VERSION, PLURALS, type RawObject } from './resources.js';

/**
 * The custom-resource calls the controller makes, each bounded in time: a hung API
 * server must turn into UNAVAILABLE, not a request that never answers.
 */
export class CustomObjects {
  private readonly api: CustomObjectsApi;

  constructor(
    kubeConfig: KubeConfig,
    private readonly timeoutMs: number,
  ) {
    this.api = kubeConfig.makeApiClient(CustomObjectsApi);
  }

  list(kind: Kind): Promise<KubernetesListObject<KubernetesObject>> {
    return this.bounded(
      this.api.listClusterCustomObject(this.target(kind)) as Promise<KubernetesListObject<KubernetesObject>>,
      `list ${PLURALS[kind]}`,
    );
  }

  /** `namespace`: of an object of a namespaced kind (get, delete); create and replace read the body's. */
  get(kind: Kind, name: string, namespace?: string): Promise<RawObject> {
    const request =
      namespace === undefined
        ? this.api.getClusterCustomObject({ ...this.target(kind), name })
        : this.api.getNamespacedCustomObject({ ...this.target(kind), namespace, name });
    return this.call(request, `read ${kind} ${named(name, namespace)}`);
  }

  create(kind: Kind, body: RawObject): Promise<RawObject> {
    const namespace = body.metadata?.namespace;
    const request =
      namespace === undefined
        ? this.api.createClusterCustomObject({ ...this.target(kind), body })
        : this.api.createNamespacedCustomObject({ ...this.target(kind), namespace, body });
    return this.call(request, `create ${kind} ${named(body.metadata?.name ?? '', namespace)}`);
  }

  /** Replaces the object; `body.metadata.resourceVersion` makes it fail with CONFLICT on a race. */
  replace(kind: Kind, body: RawObject): Promise<RawObject> {
    const name = body.metadata?.name ?? '';
    const namespace = body.metadata?.namespace;
    const request =
      namespace === undefined
        ? this.api.replaceClusterCustomObject({ ...this.target(kind), name, body })
        : this.api.replaceNamespacedCustomObject({ ...this.target(kind), namespace, name, body });
    return this.call(request, `update ${kind} ${named(name, namespace)}`);
  }

  /** Deletes the object only if it is still at `resourceVersion`. */
  delete(kind: Kind, name: string, resourceVersion: string | undefined, namespace?: string): Promise<void> {
    const target = {
      ...this.target(kind),
      name,
      ...(resourceVersion ? { body: { preconditions: { resourceVersion } } } : {}),
    };
    const request =
      namespace === undefined
        ? this.api.deleteClusterCustomObject(target)
        : this.api.deleteNamespacedCustomObject({ ...target, namespace });
    return this.call(request, `delete ${kind} ${named(name, namespace)}`).then(() => undefined);
  }

  /**
   * Merge-patches `.status`; with `resourceVersion` only if the object is still at it
   * (CONFLICT otherwise), so that a write made from a stale copy never drops another
   * writer's condition.
   */
  patchStatus(
    kind: Kind,
    name: string,
    status: unknown,
    resourceVersion?: string,
    /** Of an object of a namespaced kind. */
    namespace?: string,
  ): Promise<RawObject> {
    const body = resourceVersion === undefined ? { status } : { metadata: { resourceVersion }, status };
    const options = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const request =
      namespace === undefined
        ? this.api.patchClusterCustomObjectStatus({ ...this.target(kind), name, body }, options)
        : this.api.patchNamespacedCustomObjectStatus(
            { ...this.target(kind), namespace, name, body },
            options,
          );
    return this.call(request, `write the status of ${kind} ${named(name, namespace)}`);
  }

  private target(kind: Kind) {
    return { group: API_GROUP, version: API_GROUP_VERSION, plural: PLURALS[kind] };
  }

  private async call(request: Promise<unknown>, doing: string): Promise<RawObject> {
    return (await this.bounded(request, doing)) as RawObject;
  }

  private async bounded<T>(request: Promise<T>, doing: string): Promise<T> {
    try {
      return await withTimeout(request, this.timeoutMs, 'the API server');
    } catch (err) {
      throw toArbiterError(err, doing);
    }
  }
}
