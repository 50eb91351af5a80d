import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { RequestListener } from 'node:http';
import type { Logger } from 'pino';
import type { ServingCertificates } from './serving-certificates.js';

export interface AdmissionServerOptions {
  port: number;
  host: string;
  certificates: ServingCertificates;
  handler: RequestListener;
  logger: Logger;
  /** close() waits this long for reviews under way, then drops the connections left. */
  closeGraceMs: number;
}

export interface AdmissionServer {
  readonly port: number;
  /** Stops accepting connections and waits for the reviews under way. */
  close(): Promise<void>;
}

/** Go's HTTP client (the API server) keeps idle connections for 90 s: outlive them. */
const KEEP_ALIVE_MS = 120_000;

/**
 * The webhooks' HTTPS server: plain node:https (the API server speaks HTTP/1.1 to
 * webhooks), with the serving certificate swapped in place when it is renewed, so no
 * connection or replica restarts for a new certificate.
 */
export async function startAdmissionServer(options: AdmissionServerOptions): Promise<AdmissionServer> {
  const pair = options.certificates.current();
  if (!pair) throw new Error('no serving certificate for the admission webhooks yet');
  const server: Server = createServer(
    {
      cert: pair.certPem,
      key: pair.keyPem,
      keepAliveTimeout: KEEP_ALIVE_MS,
      // Node checks headersTimeout from the start of each request on a kept-alive socket.
      headersTimeout: KEEP_ALIVE_MS + 5_000,
      requestTimeout: KEEP_ALIVE_MS + 10_000,
    },
    options.handler,
  );
  let served = pair;
  const unsubscribe = options.certificates.onChange(() => {
    const next = options.certificates.current();
    if (!next || (next.certPem === served.certPem && next.keyPem === served.keyPem)) return;
    try {
      server.setSecureContext({ cert: next.certPem, key: next.keyPem });
      served = next;
      options.logger.info('admission serving certificate renewed; new connections use it');
    } catch (err) {
      options.logger.error(
        { err },
        'the new admission serving certificate does not load; keeping the old one',
      );
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ admission_port: port }, `admission webhooks listening on port ${port} (HTTPS)`);
  return {
    port,
    close: async () => {
      unsubscribe();
      // Kept-alive connections (the API server's) end as they turn idle; past the grace,
      // whatever is left is dropped, so a connection can never hold up the shutdown.
      const sweeper = setInterval(() => server.closeIdleConnections(), 50);
      const forced = setTimeout(() => server.closeAllConnections(), options.closeGraceMs);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      clearInterval(sweeper);
      clearTimeout(forced);
    },
  };
}
