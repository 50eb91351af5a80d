import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { PortForward, type KubeConfig } from '@kubernetes/client-node';
import { networkReason, type ArbiterEndpoint } from './arbiter-client.js';
import type { ArbiterPod } from './cluster-discovery.js';
import { PluginError } from './plugin-error.js';

/*
 * Why a port-forward, and not the API server's service proxy
 * (/api/v1/namespaces/NS/services/http:NAME:http/proxy/...), which would need no kubelet:
 * the API server authenticates the caller with the Authorization header and removes it
 * before proxying (kubernetes/kubernetes#38775), so Arbiter would see no token and answer
 * 401; and an Arbiter API key in that header is refused by the API server itself. A
 * port-forward carries the plugin's own HTTP requests, headers and all, to the pod: the
 * API server checks the kubeconfig user (RBAC on pods/portforward), Arbiter checks the token.
 */

/** What we use of the WebSocket PortForward opens (the `ws` package's, untyped here). */
interface TunnelSocket {
  close(): void;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * A local listener on 127.0.0.1 whose every connection is tunnelled, through the API
 * server, to the pod's port: Arbiter is then reachable at the endpoint's URL.
 */
export async function openPortForward(kubeConfig: KubeConfig, target: ArbiterPod): Promise<ArbiterEndpoint> {
  const forward = new PortForward(kubeConfig);
  const where = `pod ${target.namespace}/${target.pod} port ${target.port}`;
  const tunnels = new Set<TunnelSocket>();
  const sockets = new Set<Socket>();
  let failure: PluginError | undefined;
  const fail = (reason: string, socket: Socket) => {
    failure ??= new PluginError(
      `port-forward to ${where} (Service ${target.service}) failed: ${reason}; or reach Arbiter with --server URL`,
    );
    socket.destroy();
  };

  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    // The socket stays paused until PortForward reads it, so the request waits for the tunnel.
    forward
      .portForward(target.namespace, target.pod, [target.port], socket, errorChannel(socket, fail), socket)
      .then((opened) => {
        const tunnel = opened as unknown as TunnelSocket;
        tunnels.add(tunnel);
        // PortForward never ends the local socket: do it when the pod's side closes.
        tunnel.once('close', () => {
          tunnels.delete(tunnel);
          socket.end();
        });
        socket.once('close', () => tunnel.close());
      })
      .catch(async (err: unknown) => fail(await refusalReason(kubeConfig, target, err), socket));
  });
  const port = await listenOnLoopback(server);
  return {
    url: new URL(`http://127.0.0.1:${port}`),
    unreachable: (err) =>
      failure ?? new PluginError(`the port-forward to ${where} broke: ${networkReason(err)}`),
    close: async () => {
      for (const tunnel of tunnels) tunnel.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The tunnel's error stream: the kubelet reports there when it cannot reach the pod's port. */
function errorChannel(socket: Socket, fail: (reason: string, socket: Socket) => void): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      fail(chunk.toString('utf8').trim(), socket);
      done();
    },
  });
}

async function listenOnLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/**
 * Why the API server refused the tunnel. The WebSocket client only says "Unexpected server
 * response: 500"; the same upgrade request, read as plain HTTP, returns the API server's
 * Status with its reason (no host assigned, the kubelet unreachable, RBAC).
 */
async function refusalReason(kubeConfig: KubeConfig, target: ArbiterPod, err: unknown): Promise<string> {
  const fallback = (err as { message?: unknown } | undefined)?.message;
  const said = typeof fallback === 'string' ? fallback : networkReason(err);
  const server = kubeConfig.getCurrentCluster()?.server;
  if (!server) return said;
  const path = `/api/v1/namespaces/${target.namespace}/pods/${target.pod}/portforward?ports=${target.port}`;
  try {
    return (await upgradeRefusal(kubeConfig, `${server.replace(/\/+$/, '')}${path}`)) ?? said;
  } catch {
    return said; // no better reason to be had: the WebSocket client's will do
  }
}

/** The Status message of a refused upgrade request; undefined if it was not refused that way. */
async function upgradeRefusal(kubeConfig: KubeConfig, url: string): Promise<string | undefined> {
  const options: https.RequestOptions = {
    method: 'GET',
    timeout: 10_000,
    headers: {
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': randomBytes(16).toString('base64'),
      'sec-websocket-protocol': 'v4.channel.k8s.io',
    },
  };
  await kubeConfig.applyToHTTPSOptions(options);
  const request = url.startsWith('https:') ? https.request : http.request;
  return new Promise((resolve) => {
    const req = request(url, options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(`${statusMessage(body) ?? res.statusMessage} (HTTP ${res.statusCode})`));
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve(undefined);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

function statusMessage(body: string): string | undefined {
  try {
    const message = (JSON.parse(body) as { message?: unknown }).message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    return body.trim() || undefined;
  }
}
