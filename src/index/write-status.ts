import type { ConfigObject, ObjectStatus } from '../model/index.js';
import { isRejected } from './accepted-objects.js';
import type { IndexSnapshot } from './index-snapshot.js';

/**
 * The status a write of `written` gets (API writes, the configuration webhook): its own in
 * `trial`, the index with it written. A Capability whose parameter schema would turn the
 * condition of a policy that compiles now into one that does not type-check is refused:
 * that policy would drop out of use, and with it the restrictions it makes.
 */
export function writeStatus(
  current: IndexSnapshot,
  trial: IndexSnapshot,
  written: ConfigObject,
): ObjectStatus | undefined {
  const own = trial.statusOf(written);
  if (written.kind !== 'Capability' || isRejected(own)) return own;
  const broken = trial
    .policies()
    .find(
      (p) =>
        p.status.reason === 'InvalidCondition' &&
        current.policy(p.name)?.status.reason !== 'InvalidCondition',
    );
  if (broken === undefined) return own;
  return {
    ready: false,
    reason: 'InvalidSchema',
    message: `spec.parameterSchema would take policy ${broken.name} out of use (${broken.status.message}); change the policy first`,
    ...(written.metadata.generation !== undefined ? { observedGeneration: written.metadata.generation } : {}),
    field: 'spec.parameterSchema',
  };
}
