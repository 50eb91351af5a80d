import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  text: string;
  body: Record<string, unknown>;
}

/** A webhook receiver on a fixed port, which can be down and come up later. */
export class Receiver {
  readonly received: Received[] = [];
  private server: Server | undefined;
  constructor(readonly port: number) {}

  static async onFreePort(): Promise<Receiver> {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    return new Receiver(port);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async up(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        this.received.push({ headers: req.headers, text, body: JSON.parse(text) as Record<string, unknown> });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  of(type: string, decisionId: string): Received[] {
    return this.received.filter((r) => r.body.type === type && r.body.decision_id === decisionId);
  }
}
