import { describe, expect, it, vi } from 'vitest';
import { capability, policy } from '../engine/test-fixtures.js';
import { IndexStore } from './index-store.js';

describe('IndexStore', () => {
  it('starts empty and swaps the whole snapshot on replace', () => {
    const store = new IndexStore();
    const empty = store.current();
    expect(empty.capabilities()).toEqual([]);
    const next = store.replace([
      capability('a.one'),
      policy('p', [{ capability: 'a.one', outcome: 'DENY' }]),
    ]);
    expect(store.current()).toBe(next);
    // A reader holding the old snapshot keeps its consistent view.
    expect(empty.capability('a.one')).toBeUndefined();
    expect(empty.rulesFor('a.one')).toEqual([]);
    expect(next.capability('a.one')).toBeDefined();
    expect(next.rulesFor('a.one')).toHaveLength(1);
  });

  it('notifies listeners after the swap and stops after unsubscribe', () => {
    const store = new IndexStore([capability('a.one')]);
    const first = store.current();
    const listener = vi.fn((current) => expect(store.current()).toBe(current));
    const off = store.onChange(listener);
    const second = store.replace([]);
    expect(listener).toHaveBeenCalledWith(second, first);
    off();
    store.replace([capability('a.one')]);
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it('reuses compiled artefacts across replaces', () => {
    const objects = [capability('a.one', { parameterSchema: { type: 'object' } })];
    const store = new IndexStore(objects);
    const before = store.current().capability('a.one')!.validateParameters;
    store.replace(structuredClone(objects));
    expect(store.current().capability('a.one')!.validateParameters).toBe(before);
  });

  it('keeps the swap and calls every listener when one throws', () => {
    const store = new IndexStore();
    const second = vi.fn();
    store.onChange(() => {
      throw new Error('boom');
    });
    store.onChange(second);
    expect(() => store.replace([capability('a.one')])).toThrow(AggregateError);
    expect(() => store.replace([capability('a.one')])).toThrow('an index change listener failed');
    expect(second).toHaveBeenCalled();
    expect(store.current().capability('a.one')).toBeDefined();
  });
});
