import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { chainBrokenNotification } from './notification.js';
import { ReceiverQueue, type DeliveryResult, type ReceiverSettings } from './receiver-queue.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A receiver answering the statuses given, one per request, then 204. */
async function receiverAnswering(statuses: number[]): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = [];
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(statuses.shift() ?? 204).end();
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, bodies };
}

const item = (seq: number, deadlineMs = Date.now() + 60_000) => ({
  notification: {
    ...chainBrokenNotification({ seq, reason: `break ${seq}` }, new Date(0)),
    audit_ref: `aud_${seq}`,
  },
  seq,
  deadlineMs,
});

function queueFor(url: string, cursor = 0, settings: Partial<ReceiverSettings> = {}) {
  const results: DeliveryResult[] = [];
  const queue = new ReceiverQueue(
    'r1',
    {
      url,
      format: 'json',
      secret: undefined,
      retryWindowMs: 60_000,
      timeoutMs: 2000,
      minBackoffMs: 20,
      maxBackoffMs: 40,
      ...settings,
    },
    cursor,
    {
      result: (_type, result) => results.push(result),
      settled: () => undefined,
      logger: pino({ level: 'silent' }),
      nowMs: Date.now,
    },
  );
  return { queue, results };
}

describe('ReceiverQueue', () => {
  it('retries a failing receiver with backoff and delivers in order, moving its cursor', async () => {
    const receiver = await receiverAnswering([500, 503]);
    const { queue, results } = queueFor(receiver.url);
    queue.push(item(1));
    queue.push(item(2));
    queue.start();
    await expect.poll(() => queue.cursor, { timeout: 5000 }).toBe(2);
    await queue.stop();
    expect(results).toEqual(['retried', 'retried', 'delivered', 'delivered']);
    expect(receiver.bodies.map((b) => (JSON.parse(b) as { audit_ref: string }).audit_ref)).toEqual([
      'aud_1',
      'aud_1',
      'aud_1',
      'aud_2',
    ]);
  });

  it('drops a notification past its deadline and goes on with the next', async () => {
    const receiver = await receiverAnswering([500]);
    const { queue, results } = queueFor(receiver.url);
    queue.push(item(1, Date.now() - 1));
    queue.push(item(2));
    queue.start();
    await expect.poll(() => queue.cursor, { timeout: 5000 }).toBe(2);
    await queue.stop();
    expect(results).toEqual(['dropped', 'delivered']);
  });

  it('skips what its cursor is past, and leaves the rest unsettled when stopped', async () => {
    const receiver = await receiverAnswering([500, 500, 500, 500, 500, 500]);
    const { queue } = queueFor(receiver.url, 5, { minBackoffMs: 10_000, maxBackoffMs: 10_000 });
    queue.push(item(4));
    expect(queue.length).toBe(0);
    queue.push(item(6));
    queue.start();
    await expect.poll(() => receiver.bodies.length, { timeout: 5000 }).toBe(1);
    await queue.stop(); // does not wait out the backoff
    expect(queue.cursor).toBe(5);
  });
});
