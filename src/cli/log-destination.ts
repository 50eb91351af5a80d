import { pino, type DestinationStream } from 'pino';

/**
 * Where serve's log lines go: a file descriptor written asynchronously, so that under load
 * one write(2) carries many access-log lines instead of each stopping the event loop. pino
 * flushes what is pending on exit.
 *
 * Lines are handed over as bytes: with text, sonic-boom appends each line to the string
 * pending and measures that string again, copying everything pending per line (kilobytes
 * per request under load); pending Buffers are only concatenated when they are written.
 */
export function asyncLogDestination(fd: number): DestinationStream {
  // In buffer mode sonic-boom's write takes Buffers; its types know only text.
  const stream = pino.destination({ dest: fd, sync: false, contentMode: 'buffer' }) as unknown as {
    write(bytes: Buffer): boolean;
  };
  return { write: (line: string) => stream.write(Buffer.from(line, 'utf8')) };
}
