import { Command } from 'ioredis';

const CRLF = 0x0d0a;

/**
 * A command written to the socket as one buffer, framed here in a single pass.
 * ioredis's own framing builds a few concatenated strings per argument and measures each
 * twice; for a script call with dozens of keys and arguments that was about 2 KB of
 * garbage per audit append. (ioredis subclasses Command the same way for its scripts.)
 */
export class FramedCommand extends Command {
  override toWritable(): Buffer {
    // Arguments are strings or Buffers here: the constructor stringified the others.
    const args = this.args as (string | Buffer)[];
    let size = header(args.length + 1) + bulkSize(this.name);
    for (const arg of args) size += bulkSize(arg);
    const out = Buffer.allocUnsafe(size);
    let at = writeHeader(out, 0, 0x2a, args.length + 1); // *<count>
    at = writeBulk(out, at, this.name);
    for (const arg of args) at = writeBulk(out, at, arg);
    return out;
  }
}

/** Bytes of `*<count>\r\n` or `$<length>\r\n`. */
function header(value: number): number {
  return digits(value) + 3;
}

function digits(value: number): number {
  let count = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) count++;
  return count;
}

/** `<mark><value>\r\n`, the digits written as bytes (no string per argument). */
function writeHeader(out: Buffer, at: number, mark: number, value: number): number {
  out[at] = mark;
  const end = at + 1 + digits(value);
  let rest = value;
  for (let i = end - 1; i > at; i--) {
    out[i] = 0x30 + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  return out.writeUInt16BE(CRLF, end);
}

function byteLength(arg: string | Buffer): number {
  return typeof arg === 'string' ? Buffer.byteLength(arg, 'utf8') : arg.length;
}

function bulkSize(arg: string | Buffer): number {
  const length = byteLength(arg);
  return header(length) + length + 2;
}

function writeBulk(out: Buffer, at: number, arg: string | Buffer): number {
  at = writeHeader(out, at, 0x24, byteLength(arg)); // $<length>
  at += typeof arg === 'string' ? out.write(arg, at, 'utf8') : arg.copy(out, at);
  return out.writeUInt16BE(CRLF, at);
}
