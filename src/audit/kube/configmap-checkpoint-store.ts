import type { CoreV1Api, V1ConfigMap } from '@kubernetes/client-node';
import { ArbiterError } from '../../model/index.js';
import type { Checkpoint, CheckpointStore } from '../audit-log.js';
import { checkPreviousNote, isCheckpoint } from '../checkpoint-shape.js';

/** Data key of the ConfigMap; its value has the format of the file store's checkpoints.json. */
export const CHECKPOINTS_KEY = 'checkpoints.json';

export interface ConfigMapCheckpointStoreOptions {
  api: Pick<
    CoreV1Api,
    'readNamespacedConfigMap' | 'createNamespacedConfigMap' | 'replaceNamespacedConfigMap'
  >;
  namespace: string;
  name: string;
  /** Newest checkpoints kept; older ones are dropped on save. */
  retain: number;
  /** Read-modify-write attempts when another writer changed the ConfigMap in between. Default 8. */
  maxAttempts?: number;
  labels?: Record<string, string>;
}

/**
 * Checkpoints in a ConfigMap (`data["checkpoints.json"]` = {"checkpoints": [...]}, oldest
 * first), so `kubectl get configmap` shows them and `arbiter audit verify --checkpoint`
 * reads them. Saves are read-modify-write guarded by resourceVersion, retried on conflict.
 */
export class ConfigMapCheckpointStore implements CheckpointStore {
  private readonly maxAttempts: number;

  constructor(private readonly options: ConfigMapCheckpointStoreOptions) {
    if (!Number.isSafeInteger(options.retain) || options.retain < 1) {
      throw new ArbiterError('INVALID_REQUEST', 'retain must be a positive integer');
    }
    this.maxAttempts = options.maxAttempts ?? 8;
  }

  async list(): Promise<Checkpoint[]> {
    const configMap = await this.read();
    return configMap ? this.parse(configMap) : [];
  }

  async save(checkpoint: Checkpoint, options?: { previousNote: string | null }): Promise<void> {
    for (let attempt = 1; attempt <= this.maxAttempts; attempt += 1) {
      const current = await this.read();
      const checkpoints = current ? this.parse(current) : [];
      // Inside the read-modify-write: the replace fails (409) if another signer got in between.
      if (options) checkPreviousNote(checkpoints, options.previousNote);
      // Never replace a checkpoint: one naming another hash at this seq is evidence of a rewrite.
      if (checkpoints.some((c) => c.seq === checkpoint.seq)) return;
      const next = [...checkpoints, { ...checkpoint }]
        .sort((a, b) => a.seq - b.seq)
        .slice(-this.options.retain);
      try {
        await this.write(current, next);
        return;
      } catch (err) {
        // 409: someone else wrote (or created) it since our read; read again.
        if (statusOf(err) !== 409) throw err;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
      }
    }
    throw new ArbiterError(
      'CONFLICT',
      `checkpoint ConfigMap ${this.options.namespace}/${this.options.name} kept changing; gave up after ${this.maxAttempts} attempts`,
    );
  }

  private async read(): Promise<V1ConfigMap | undefined> {
    try {
      return await this.options.api.readNamespacedConfigMap({
        name: this.options.name,
        namespace: this.options.namespace,
      });
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  private async write(current: V1ConfigMap | undefined, checkpoints: Checkpoint[]): Promise<void> {
    const data = { [CHECKPOINTS_KEY]: `${JSON.stringify({ checkpoints }, null, 2)}\n` };
    const { namespace, name } = this.options;
    if (!current) {
      const body: V1ConfigMap = { metadata: { name, namespace, labels: this.options.labels }, data };
      await this.options.api.createNamespacedConfigMap({ namespace, body });
      return;
    }
    // resourceVersion makes the replace fail with 409 if the ConfigMap changed since the read.
    const body: V1ConfigMap = { ...current, data: { ...current.data, ...data } };
    await this.options.api.replaceNamespacedConfigMap({ name, namespace, body });
  }

  private parse(configMap: V1ConfigMap): Checkpoint[] {
    const text = configMap.data?.[CHECKPOINTS_KEY];
    if (text === undefined) return [];
    let list: unknown;
    try {
      list = (JSON.parse(text) as { checkpoints?: unknown }).checkpoints;
    } catch {
      // Not JSON: list stays undefined, refused below.
    }
    if (!Array.isArray(list) || !list.every(isCheckpoint)) {
      throw new ArbiterError(
        'INTERNAL',
        `ConfigMap ${this.options.namespace}/${this.options.name} does not hold a checkpoint list`,
      );
    }
    return [...list].sort((a, b) => a.seq - b.seq);
  }
}

/** HTTP status of a failed client-node call (ApiException carries it as `code`). */
function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}
