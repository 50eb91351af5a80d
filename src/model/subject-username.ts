import type { ActorSubject } from './config-object.js';

const SERVICE_ACCOUNT_USERNAME_PREFIX = 'system:serviceaccount:';

/** The username the API server gives the subject (AdmissionReview userInfo.username). */
export function subjectUsername(subject: ActorSubject): string {
  return subject.kind === 'ServiceAccount'
    ? `${SERVICE_ACCOUNT_USERNAME_PREFIX}${subject.namespace ?? ''}:${subject.name}`
    : subject.name;
}

/** `namespace/name` of a ServiceAccount username, undefined for other users. */
export function serviceAccountOf(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_USERNAME_PREFIX)) return undefined;
  const [namespace, name, ...rest] = username.slice(SERVICE_ACCOUNT_USERNAME_PREFIX.length).split(':');
  if (!namespace || !name || rest.length > 0) return undefined;
  return { namespace, name };
}
