import type { ActorSubject } from '../model/index.js';

export type NamespacedSubjects =
  | { ok: true; subjects: ActorSubject[] }
  | { ok: false; reason: 'ForeignSubject'; field: string; message: string };

/**
 * The Kubernetes identities a NamespacedActorGrant in `namespace` binds: ServiceAccounts of
 * that namespace only (`namespace` optional, the grant's own when absent). Anything else
 * is foreign: the configuration webhook refuses such a grant and the index ignores it, so
 * a team can never speak for another team's, or a cluster user's, identity.
 */
export function namespacedSubjects(
  namespace: string,
  subjects: readonly ActorSubject[] | undefined,
): NamespacedSubjects {
  const local: ActorSubject[] = [];
  for (const [i, subject] of (subjects ?? []).entries()) {
    const own = subject.kind === 'ServiceAccount' && (subject.namespace ?? namespace) === namespace;
    if (!own)
      return {
        ok: false,
        reason: 'ForeignSubject',
        field: `spec.actor.subjects[${i}]`,
        message: `binds ${subjectText(subject)}, but a NamespacedActorGrant in ${namespace} may bind only ServiceAccounts of ${namespace}`,
      };
    local.push({ ...subject, namespace });
  }
  return { ok: true, subjects: local };
}

function subjectText(subject: ActorSubject): string {
  return subject.kind === 'ServiceAccount'
    ? `ServiceAccount ${subject.namespace}/${subject.name}`
    : `${subject.kind} ${subject.name}`;
}
