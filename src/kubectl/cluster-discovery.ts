import {
  CoreV1Api,
  type KubeConfig,
  type V1Pod,
  type V1Service,
  type V1ServicePort,
} from '@kubernetes/client-node';
import { kubeMessage, kubeStatusCode } from '../controller/kube-errors.js';
import { PluginError } from './plugin-error.js';

/** The label charts/arbiter puts on its Service (arbiter.labels in _helpers.tpl). */
export const ARBITER_SERVICE_SELECTOR = 'app.kubernetes.io/name=arbiter';

/** Where in the cluster Arbiter answers: one pod behind its Service, and the pod's port. */
export interface ArbiterPod {
  namespace: string;
  service: string;
  pod: string;
  port: number;
}

export interface DiscoveryScope {
  namespace: string;
  /** --service: this Service, whatever its labels (a chart installed with nameOverride). */
  service?: string;
}

/** Finds Arbiter's Service in the namespace, a running pod behind it, and the port its API listens on. */
export async function findArbiterPod(kubeConfig: KubeConfig, scope: DiscoveryScope): Promise<ArbiterPod> {
  const api = kubeConfig.makeApiClient(CoreV1Api);
  const server = kubeConfig.getCurrentCluster()?.server ?? 'the Kubernetes API server';
  const service = await askApiServer(server, `find Arbiter's Service in namespace "${scope.namespace}"`, () =>
    findService(api, scope),
  );
  const name = service.metadata?.name ?? '';
  const port = httpPortOf(service);
  const pods = await askApiServer(server, `list the pods of Service ${scope.namespace}/${name}`, () =>
    podsBehind(api, scope.namespace, service),
  );
  const pod = runningPod(`${scope.namespace}/${name}`, service, pods);
  return {
    namespace: scope.namespace,
    service: name,
    pod: pod.metadata?.name ?? '',
    port: containerPort(port, pod),
  };
}

async function findService(api: CoreV1Api, scope: DiscoveryScope): Promise<V1Service> {
  if (scope.service) return api.readNamespacedService({ name: scope.service, namespace: scope.namespace });
  const { items } = await api.listNamespacedService({
    namespace: scope.namespace,
    labelSelector: ARBITER_SERVICE_SELECTOR,
  });
  if (items.length === 1) return items[0]!;
  if (items.length === 0) {
    throw new PluginError(
      `no Arbiter Service in namespace "${scope.namespace}" (none labelled ${ARBITER_SERVICE_SELECTOR}); ` +
        'name the namespace with --arbiter-namespace, the Service with --service NAME, or Arbiter with --server URL',
    );
  }
  const names = items.map((s) => s.metadata?.name).join(', ');
  throw new PluginError(
    `${items.length} Arbiter Services in namespace "${scope.namespace}" (${names}): choose one with --service NAME`,
  );
}

/** The chart names the API's port `http`; a Service with a single port needs no name. */
export function httpPortOf(service: V1Service): V1ServicePort {
  const ports = service.spec?.ports ?? [];
  const port = ports.find((p) => p.name === 'http') ?? (ports.length === 1 ? ports[0] : undefined);
  if (!port) {
    const names = ports.map((p) => p.name ?? p.port).join(', ') || 'none';
    throw new PluginError(
      `Service ${service.metadata?.namespace}/${service.metadata?.name} has no port named "http" (ports: ${names})`,
    );
  }
  return port;
}

async function podsBehind(api: CoreV1Api, namespace: string, service: V1Service): Promise<V1Pod[]> {
  const selector = Object.entries(service.spec?.selector ?? {});
  if (selector.length === 0) {
    throw new PluginError(
      `Service ${namespace}/${service.metadata?.name} selects no pods (it has no selector); reach Arbiter with --server URL`,
    );
  }
  const labelSelector = selector.map(([key, value]) => `${key}=${value}`).join(',');
  return (await api.listNamespacedPod({ namespace, labelSelector })).items;
}

/** A pod port-forward can reach: running and not going away; ready ones first, as kubectl picks. */
export function runningPod(serviceName: string, service: V1Service, pods: readonly V1Pod[]): V1Pod {
  const running = pods.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
  const ready = running.find(isReady);
  const chosen = ready ?? running[0];
  if (chosen) return chosen;
  const seen =
    pods.length === 0
      ? `no pod matches its selector ${JSON.stringify(service.spec?.selector ?? {})}`
      : `pods: ${pods.map((p) => `${p.metadata?.name} (${p.status?.phase ?? 'unknown'})`).join(', ')}`;
  throw new PluginError(`no running pod behind Service ${serviceName} (${seen})`);
}

function isReady(pod: V1Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** The pod's port the Service sends to: a number, or the name of a container port (the chart's `http`). */
export function containerPort(servicePort: V1ServicePort, pod: V1Pod): number {
  const target = servicePort.targetPort ?? servicePort.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  const named = (pod.spec?.containers ?? []).flatMap((c) => c.ports ?? []).find((p) => p.name === target);
  if (!named) {
    throw new PluginError(
      `pod ${pod.metadata?.namespace}/${pod.metadata?.name} has no container port named "${target}" (the Service's targetPort)`,
    );
  }
  return named.containerPort;
}

/** A call to the API server whose refusal or absence becomes one line naming what was tried. */
async function askApiServer<T>(server: string, doing: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof PluginError) throw err;
    throw new PluginError(apiServerFailure(server, doing, err), 1, { cause: err });
  }
}

function apiServerFailure(server: string, doing: string, err: unknown): string {
  const status = kubeStatusCode(err);
  const message = firstLine(kubeMessage(err));
  if (status === undefined) {
    return `cannot reach the Kubernetes API server ${server} to ${doing}: ${message}; or pass --server URL`;
  }
  if (status === 401)
    return `the API server ${server} did not accept the kubeconfig's credentials (401): ${message}`;
  if (status === 403) return `the kubeconfig user may not ${doing} (403): ${message}`;
  if (status === 404) return `could not ${doing} (404): ${message}`;
  return `the API server could not ${doing} (${status}): ${message}`;
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
