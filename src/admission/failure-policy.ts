import {
  GOVERNANCE_WEBHOOK_CONFIGURATION,
  IGNORE_NAMESPACE_LABEL,
  type FailurePolicy,
} from './admission-settings.js';
import { formatServerVersion, isAtLeast, type ServerVersion } from './server-version.js';

/** matchConditions are on by default (beta) from Kubernetes 1.28; 1.20 refuses the field. */
export function supportsMatchConditions(version: ServerVersion): boolean {
  return isAtLeast(version, 1, 28);
}

/**
 * Fail where matchConditions send the governance webhook only the bound identities; on
 * older servers every write in the cluster would depend on Arbiter, so Ignore.
 */
export function defaultFailurePolicy(version: ServerVersion): FailurePolicy {
  return supportsMatchConditions(version) ? 'Fail' : 'Ignore';
}

/**
 * What the governance webhook's failurePolicy means while Arbiter is down, when that is
 * something an operator must know (for a loud log line); undefined when it is the safe case.
 */
export function failurePolicyRisk(version: ServerVersion, policy: FailurePolicy): string | undefined {
  const server = `Kubernetes ${formatServerVersion(version)}`;
  const recover = `to recover without Arbiter: kubectl delete validatingwebhookconfiguration ${GOVERNANCE_WEBHOOK_CONFIGURATION}`;
  if (policy === 'Ignore') {
    const why = supportsMatchConditions(version)
      ? ''
      : ` (${server} predates matchConditions (1.28), so with Fail every write in the cluster would depend on Arbiter)`;
    return (
      `the governance webhook runs with failurePolicy Ignore${why}: while Arbiter is down or slower than ` +
      'the webhook timeout, the Kubernetes API requests of governed agents are ALLOWED WITHOUT A ' +
      'DECISION OR AUDIT ENTRY; --admission-failure-policy Fail refuses them instead'
    );
  }
  if (supportsMatchConditions(version)) return undefined;
  return (
    `the governance webhook runs with failurePolicy Fail on ${server}, which predates matchConditions (1.28): ` +
    `while Arbiter is down, EVERY write to the cluster is refused, not only those of governed agents, ` +
    `except in ${excludedNamespaces(version)}; ${recover}`
  );
}

/** The namespaceSelector names namespaces by a label that Kubernetes sets only from 1.21. */
function excludedNamespaces(version: ServerVersion): string {
  const labelled = `namespaces labelled ${IGNORE_NAMESPACE_LABEL}`;
  if (isAtLeast(version, 1, 21)) return `kube-system, Arbiter's namespace and ${labelled}`;
  return (
    `${labelled} (label kube-system and Arbiter's namespace too: ` +
    'their kubernetes.io/metadata.name label exists only from Kubernetes 1.21)'
  );
}
