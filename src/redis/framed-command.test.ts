import fc from 'fast-check';
import { Command } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { FramedCommand } from './framed-command.js';

type Argument = string | number | Buffer;

/** ioredis's own framing of the same command, as bytes. */
function reference(name: string, args: Argument[]): Buffer {
  const written = new Command(name, args).toWritable({});
  return typeof written === 'string' ? Buffer.from(written, 'utf8') : written;
}

describe('FramedCommand', () => {
  it('writes the bytes ioredis writes, for any strings, numbers and buffers', () => {
    const argument = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ unit: fc.constantFrom('a', 'é', '€', '𝄞', '\r', '\n', '$', '*'), maxLength: 300 }),
      fc.integer(),
      fc.double({ noNaN: true }),
      fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
    );
    fc.assert(
      fc.property(
        fc.constantFrom('evalsha', 'eval', 'set'),
        fc.array(argument, { maxLength: 40 }),
        (name, args) => {
          expect(new FramedCommand(name, args).toWritable().equals(reference(name, args))).toBe(true);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('frames lengths of every digit count, up to a megabyte', () => {
    for (const size of [0, 9, 10, 99, 100, 12_345, 1_048_576]) {
      const args = ['x'.repeat(size), Buffer.alloc(size, 1)];
      expect(new FramedCommand('set', args).toWritable().equals(reference('set', args))).toBe(true);
    }
  });
});
