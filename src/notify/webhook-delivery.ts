import { createHmac } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Arbiter-Signature';

/** `sha256=<hex HMAC-SHA256 of the body>`: what a receiver recomputes with the shared secret. */
export function signature(secret: Buffer, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export interface Delivery {
  url: string;
  body: string;
  /** Names this delivery, the same on every retry, so a receiver can drop a repeat. */
  id: string;
  type: string;
  secret: Buffer | undefined;
  timeoutMs: number;
}

/** One POST; resolves with why it failed, or undefined when the receiver took it (2xx). */
export async function post(delivery: Delivery): Promise<string | undefined> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': 'arbiter-notifier',
    'X-Arbiter-Event': delivery.type,
    'X-Arbiter-Delivery': delivery.id,
    ...(delivery.secret ? { [SIGNATURE_HEADER]: signature(delivery.secret, delivery.body) } : {}),
  };
  try {
    const response = await fetch(delivery.url, {
      method: 'POST',
      headers,
      body: delivery.body,
      redirect: 'error',
      signal: AbortSignal.timeout(delivery.timeoutMs),
    });
    await response.body?.cancel();
    return response.ok ? undefined : `HTTP ${response.status}`;
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return cause ?? (err instanceof Error ? err.name : 'failed');
  }
}
