import { PluginError } from './plugin-error.js';
import { serverRefusal } from './server-refusal.js';

/** Where Arbiter answers for this process: the --server URL, or a port-forward's local end. */
export interface ArbiterEndpoint {
  readonly url: URL;
  /** Why a request could not reach Arbiter, in the endpoint's own terms (a tunnel's failure). */
  unreachable(err: unknown): PluginError;
  close(): Promise<void>;
}

/** Arbiter's HTTP API (/api/v1), with a bearer token; every refusal becomes a PluginError. */
export class ArbiterClient {
  constructor(
    private readonly endpoint: ArbiterEndpoint,
    private readonly token: string,
  ) {}

  async get<T>(path: string): Promise<T> {
    return (await this.send(path, { method: 'GET' })).json() as Promise<T>;
  }

  async post<T>(path: string, body: unknown): Promise<T> {
    const response = await this.send(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return response.json() as Promise<T>;
  }

  /** A server-sent event stream, open until the server ends it or `signal` aborts. */
  async eventStream(path: string, signal: AbortSignal): Promise<ReadableStream<Uint8Array>> {
    const response = await this.send(path, {
      method: 'GET',
      headers: { accept: 'text/event-stream' },
      signal,
    });
    if (!response.body) throw new PluginError(`${path} answered without a body`);
    return response.body;
  }

  private async send(path: string, init: RequestInit): Promise<Response> {
    const headers = { accept: 'application/json', ...(init.headers as Record<string, string>) };
    let response: Response;
    try {
      response = await fetch(this.urlOf(path), {
        ...init,
        headers: { ...headers, authorization: `Bearer ${this.token}` },
      });
    } catch (err) {
      if (init.signal?.aborted) throw err;
      throw this.endpoint.unreachable(err);
    }
    if (!response.ok) throw serverRefusal(response.status, response.statusText, await bodyOf(response));
    return response;
  }

  /** Below the endpoint's path, so a server behind a path prefix (an ingress) works too. */
  private urlOf(path: string): URL {
    const base = this.endpoint.url.href.replace(/\/+$/, '');
    return new URL(`${base}/api/v1${path}`);
  }
}

async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => '');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The endpoint of `--server URL`: nothing to open or close. */
export function serverEndpoint(url: URL): ArbiterEndpoint {
  return {
    url,
    unreachable: (err) =>
      new PluginError(`cannot reach Arbiter at ${url.origin}: ${networkReason(err)}`, 1, { cause: err }),
    close: () => Promise.resolve(),
  };
}

/** fetch says "fetch failed" and keeps the reason (ECONNREFUSED, a certificate error) in `cause`. */
export function networkReason(err: unknown): string {
  const cause = (err as { cause?: unknown } | undefined)?.cause ?? err;
  // "localhost" may resolve to ::1 and 127.0.0.1: each refusal is in an AggregateError.
  const first: unknown = cause instanceof AggregateError ? (cause.errors[0] ?? cause) : cause;
  if (!(first instanceof Error)) return String(first);
  const code = (first as { code?: unknown }).code;
  return first.message || (typeof code === 'string' ? code : first.name);
}
