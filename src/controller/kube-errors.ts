import { ApiException } from '@kubernetes/client-node';
import { ArbiterError } from '../model/index.js';

/** The Status object the API server sends with a refusal. */
interface KubeStatus {
  message?: string;
  reason?: string;
  details?: { causes?: { field?: string; message?: string }[] };
}

/** HTTP status of a refusal by the API server; undefined when it was not reached. */
export function kubeStatusCode(err: unknown): number | undefined {
  if (err instanceof ApiException) return err.code;
  const code = (err as { statusCode?: unknown; code?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/** The API server's own words (its Status message), for passing validation errors through. */
export function kubeMessage(err: unknown): string {
  if (err instanceof ApiException) {
    const status = parseStatus(err.body);
    if (status?.message) return status.message;
    return `${err.code} ${err.message}`;
  }
  return err instanceof Error ? err.message : String(err);
}

function parseStatus(body: unknown): KubeStatus | undefined {
  if (typeof body === 'string') {
    try {
      return JSON.parse(body) as KubeStatus;
    } catch {
      return undefined;
    }
  }
  return body && typeof body === 'object' ? body : undefined;
}

/**
 * Maps a failed Kubernetes call to the API's error vocabulary: refusals keep the API
 * server's message; an unreachable or failing server is UNAVAILABLE (the client may retry).
 */
export function toArbiterError(err: unknown, doing: string): ArbiterError {
  if (err instanceof ArbiterError) return err;
  const code = kubeStatusCode(err);
  const message = kubeMessage(err);
  const options = { cause: err };
  if (code === 400 || code === 422)
    return new ArbiterError(
      'INVALID_REQUEST',
      `Kubernetes refused to ${doing}: ${message}`,
      undefined,
      options,
    );
  if (code === 409) return new ArbiterError('CONFLICT', `${doing}: ${message}`, undefined, options);
  if (code === 404) return new ArbiterError('NOT_FOUND', `${doing}: ${message}`, undefined, options);
  if (code === 401 || code === 403)
    return new ArbiterError(
      'INTERNAL',
      `the controller is not allowed to ${doing} (check its RBAC): ${message}`,
      undefined,
      options,
    );
  return new ArbiterError(
    'UNAVAILABLE',
    `the Kubernetes API server is unavailable, could not ${doing}: ${message}`,
    undefined,
    options,
  );
}
