export {
  CHECKPOINTS_KEY,
  ConfigMapCheckpointStore,
  type ConfigMapCheckpointStoreOptions,
} from './configmap-checkpoint-store.js';
