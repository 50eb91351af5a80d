import { request } from 'node:https';

/**
 * A raw HTTPS call to the test API server: full control over verbs, content types and
 * Accept headers (server-side Tables, merge patches), and the Status body of a refusal
 * as the server wrote it. Typed clients are for code under test; tests may use this.
 */
export interface KubeRequestOptions {
  /** Serialised as JSON unless it is already a string. */
  body?: unknown;
  /** Default application/json; e.g. application/merge-patch+json for PATCH. */
  contentType?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

export interface KubeResponse<T = unknown> {
  status: number;
  /** Parsed JSON, or undefined when the body is not JSON. */
  body: T;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface KubeEndpoint {
  url: string;
  caCert: string;
  token: string;
}

export function kubeRequest<T = unknown>(
  endpoint: KubeEndpoint,
  method: string,
  path: string,
  options: KubeRequestOptions = {},
): Promise<KubeResponse<T>> {
  const payload =
    options.body === undefined
      ? undefined
      : typeof options.body === 'string'
        ? options.body
        : JSON.stringify(options.body);
  const contentType =
    options.contentType ?? (method === 'PATCH' ? 'application/merge-patch+json' : 'application/json');
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, endpoint.url),
      {
        method,
        ca: endpoint.caCert,
        timeout: options.timeoutMs ?? 15_000,
        headers: {
          Authorization: `Bearer ${endpoint.token}`,
          Accept: 'application/json',
          ...(payload === undefined ? {} : { 'Content-Type': contentType }),
          ...options.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body: body as T, text, headers: res.headers });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}
