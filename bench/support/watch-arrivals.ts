import { Watch } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ControlPlane } from '../../test/env/kube-apiserver.js';
import { API_BASE, PLURAL } from './controller.js';

interface WatchedObject {
  metadata?: { name?: string; resourceVersion?: string };
}

/**
 * A plain watch on some kinds, from this process: when each event arrived. It is the
 * floor of any controller's reaction (no informer can learn of a change sooner).
 */
export interface WatchArrivals {
  /** performance.now() when the event arrived; MODIFIED events are told apart by resourceVersion. */
  arrival(type: string, kind: string, name: string, resourceVersion?: string): Promise<number>;
  stop(): void;
}

function eventKey(type: string, kind: string, name: string, resourceVersion?: string): string {
  return type === 'MODIFIED' ? `${type} ${kind}/${name} ${resourceVersion}` : `${type} ${kind}/${name}`;
}

export async function watchArrivals(cp: ControlPlane, kinds: readonly string[]): Promise<WatchArrivals> {
  const watch = new Watch(cp.makeKubeConfig());
  const arrivals = new Map<string, number>();
  const ended: string[] = [];
  const aborts = await Promise.all(
    kinds.map((kind) =>
      watch.watch(
        `${API_BASE}/${PLURAL[kind]}`,
        {},
        (type: string, object: WatchedObject) => {
          const meta = object.metadata ?? {};
          arrivals.set(eventKey(type, kind, meta.name ?? '', meta.resourceVersion), performance.now());
        },
        () => ended.push(kind),
      ),
    ),
  );
  return {
    async arrival(type, kind, name, resourceVersion) {
      const key = eventKey(type, kind, name, resourceVersion);
      const deadline = performance.now() + 5_000;
      while (!arrivals.has(key)) {
        if (performance.now() > deadline)
          throw new Error(
            `no watch event ${key} within 5 s${ended.length ? ` (ended: ${ended.join(', ')})` : ''}`,
          );
        await sleep(2);
      }
      return arrivals.get(key)!;
    },
    stop() {
      for (const abort of aborts) abort.abort();
    },
  };
}
