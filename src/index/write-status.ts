import type { ConfigObject, Kind, ObjectStatus } from '../model/index.js';
import { isRejected } from './accepted-objects.js';
import type { IndexSnapshot } from './index-snapshot.js';
import type { StatusEntry } from './indexed-types.js';

// A NamespacedPolicy out of use loses its namespace's tightening just as a Policy does.
const POLICY_KINDS: ReadonlySet<Kind> = new Set<Kind>(['Policy', 'NamespacedPolicy']);

/**
 * The status a write of `written` gets (API writes, the configuration webhook): its own in
 * `trial`, the index with it written. A Capability whose parameter schema would turn the
 * condition of a policy that compiles now into one that does not type-check is refused:
 * that policy would drop out of use, and with it the restrictions it makes. The same holds
 * for a NamespacedPolicy, whose rules tighten its namespace's decisions.
 */
export function writeStatus(
  current: IndexSnapshot,
  trial: IndexSnapshot,
  written: ConfigObject,
): ObjectStatus | undefined {
  const own = trial.statusOf(written);
  if (written.kind !== 'Capability' || isRejected(own)) return own;
  const broken = trial
    .statuses()
    .find(
      (entry) =>
        POLICY_KINDS.has(entry.kind) &&
        entry.status.reason === 'InvalidCondition' &&
        current.status(entry.kind, entry.name, entry.namespace)?.reason !== 'InvalidCondition',
    );
  if (broken === undefined) return own;
  return {
    ready: false,
    reason: 'InvalidSchema',
    message: `spec.parameterSchema would take ${describe(broken)} out of use (${broken.status.message}); change the policy first`,
    ...(written.metadata.generation !== undefined ? { observedGeneration: written.metadata.generation } : {}),
    field: 'spec.parameterSchema',
  };
}

function describe(entry: StatusEntry): string {
  return entry.namespace === undefined
    ? `policy ${entry.name}`
    : `${entry.kind} ${entry.namespace}/${entry.name}`;
}
