import { describe, expect, it } from 'vitest';
import type { Checkpoint } from './audit-log.js';
import {
  checkPreviousNote,
  CheckpointConflictError,
  cosignedNote,
  isCheckpoint,
} from './checkpoint-shape.js';

const valid: Checkpoint = { seq: 7, hash: 'sha256:7', entry_id: 'aud-7', time: '2025-01-01T00:00:00.000Z' };

describe('isCheckpoint', () => {
  it('takes a checkpoint with or without its note and cosignatures', () => {
    expect(isCheckpoint(valid)).toBe(true);
    expect(isCheckpoint({ ...valid, note: 'note\n', cosignatures: [] })).toBe(true);
    expect(isCheckpoint({ ...valid, note: 'note\n', cosignatures: ['— w1\n', '— w2\n'] })).toBe(true);
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['a number', 7],
    ['a list', [valid]],
    ['a function with the members of one', Object.assign(() => valid, valid)],
    ['seq as a string', { ...valid, seq: '7' }],
    ['a fractional seq', { ...valid, seq: 7.5 }],
    ['no hash', { ...valid, hash: undefined }],
    ['a numeric hash', { ...valid, hash: 7 }],
    ['no entry_id', { ...valid, entry_id: undefined }],
    ['a time that is no string', { ...valid, time: 0 }],
    ['a note that is no string', { ...valid, note: 1 }],
    ['cosignatures that are no list', { ...valid, cosignatures: '— w1\n' }],
    ['a cosignature that is no string', { ...valid, cosignatures: ['— w1\n', 2] }],
  ])('refuses %s', (_name, value) => {
    expect(isCheckpoint(value)).toBe(false);
  });
});

describe('cosignedNote', () => {
  it("is the log's note followed by every cosignature line, as they are", () => {
    expect(cosignedNote({ ...valid, note: 'note\n' })).toBe('note\n');
    expect(cosignedNote({ ...valid, note: 'note\n', cosignatures: ['— w1 a\n', '— w2 b\n'] })).toBe(
      'note\n— w1 a\n— w2 b\n',
    );
  });
});

describe('checkPreviousNote', () => {
  const signed = (seq: number, note: string): Checkpoint => ({ ...valid, seq, note });

  it('passes when the newest signed checkpoint is the expected one, null when there is none', () => {
    expect(() => checkPreviousNote([valid], null)).not.toThrow();
    expect(() => checkPreviousNote([signed(1, 'a'), signed(2, 'b'), valid], 'b')).not.toThrow();
  });

  it('refuses with a conflict when another was signed since', () => {
    const conflict = new CheckpointConflictError(
      'another signed checkpoint was stored since this one was signed',
    );
    expect(() => checkPreviousNote([signed(1, 'a'), signed(2, 'b')], 'a')).toThrow(conflict);
    expect(() => checkPreviousNote([signed(1, 'a')], null)).toThrow(conflict);
  });
});
