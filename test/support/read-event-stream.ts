/**
 * Reads a text/event-stream response until `done(text so far)` or 10 s, then aborts it;
 * resolves with what arrived. Bounded: aborting also ends a read that waits for a byte.
 */
export async function readStreamUntil(
  response: Response,
  controller: AbortController,
  done: (received: string) => boolean,
): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let received = '';
  const giveUp = setTimeout(() => controller.abort(), 10_000);
  try {
    while (!done(received)) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      received += decoder.decode(value, { stream: true });
    }
  } catch {
    // Aborted: the caller checks what arrived.
  } finally {
    clearTimeout(giveUp);
    controller.abort();
  }
  return received;
}
