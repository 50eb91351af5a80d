/** An error answer of the API: `{"error":{"code","message"}}` with its HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export type Query = Record<string, string | undefined>;

export interface ApiClient {
  get<T>(path: string, query?: Query): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
  /** A long-lived response (SSE) with the caller's abort signal. */
  open(path: string, accept: string, signal: AbortSignal): Promise<Response>;
}

/** The API beside the console: /console/ -> /api/v1/, also behind a path prefix. */
const API_BASE = new URL('../api/v1/', document.baseURI);

export function urlOf(path: string, query: Query = {}): string {
  const url = new URL(path, API_BASE);
  for (const [name, value] of Object.entries(query)) if (value) url.searchParams.set(name, value);
  return url.toString();
}

async function errorOf(response: Response): Promise<ApiError> {
  const body = (await response.json().catch(() => null)) as {
    error?: { code?: string; message?: string };
  } | null;
  return new ApiError(
    response.status,
    body?.error?.code ?? `HTTP_${response.status}`,
    body?.error?.message ?? response.statusText,
  );
}

/**
 * Calls with the credential as `Authorization: Bearer`. A 401 means the credential no
 * longer works: `onUnauthenticated` signs the user out.
 */
export function apiClient(credential: string, onUnauthenticated: () => void): ApiClient {
  const send = async (url: string, init: RequestInit): Promise<Response> => {
    const headers = new Headers(init.headers);
    headers.set('Authorization', `Bearer ${credential}`);
    const response = await fetch(url, { ...init, headers, cache: 'no-store' });
    if (response.ok) return response;
    const error = await errorOf(response);
    if (response.status === 401) onUnauthenticated();
    throw error;
  };
  return {
    async get<T>(path: string, query?: Query) {
      return (await (
        await send(urlOf(path, query), { headers: { Accept: 'application/json' } })
      ).json()) as T;
    },
    async post<T>(path: string, body: unknown) {
      const init = {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      };
      return (await (await send(urlOf(path), init)).json()) as T;
    },
    open(path, accept, signal) {
      return send(urlOf(path), { headers: { Accept: accept }, signal });
    },
  };
}
