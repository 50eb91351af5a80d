import { describe, expect, it, vi } from 'vitest';
import { collectingLogger } from '../admission/tls/test-fixtures.js';
import { ServingState } from './serving-state.js';

const pair = (n: number) => ({ certPem: `cert ${n}`, keyPem: `key ${n}` });

describe('ServingState', () => {
  it('tells listeners about a new pair or bundle, not about the same one', () => {
    const state = new ServingState(collectingLogger().logger);
    const listener = vi.fn();
    state.onChange(listener);

    expect(state.set(pair(1), 'bundle 1')).toBe(true);
    expect(state.set(pair(1), 'bundle 1')).toBe(false);
    expect(state.set(pair(1), 'bundle 2')).toBe(true);
    expect(state.set(pair(2), 'bundle 2')).toBe(true);
    expect(listener).toHaveBeenCalledTimes(3);
    expect(state.current()).toEqual(pair(2));
    expect(state.caBundle()).toBe('bundle 2');
  });

  it('stops telling a listener that unsubscribed', () => {
    const state = new ServingState(collectingLogger().logger);
    const listener = vi.fn();
    const unsubscribe = state.onChange(listener);
    unsubscribe();
    state.set(pair(1), undefined);
    expect(listener).not.toHaveBeenCalled();
  });

  it('tells every listener even when one throws, and logs the failure', () => {
    const { logger, messages } = collectingLogger();
    const state = new ServingState(logger);
    const second = vi.fn();
    state.onChange(() => {
      throw new Error('boom');
    });
    state.onChange(second);

    state.set(pair(1), undefined);
    expect(second).toHaveBeenCalledOnce();
    expect(messages('error')).toEqual(['a serving certificate listener failed']);
  });

  it('waits a bounded time for the first pair', async () => {
    const state = new ServingState(collectingLogger().logger);
    expect(await state.waitLoaded(10)).toBe(false);
    setTimeout(() => state.set(pair(1), undefined), 10);
    expect(await state.waitLoaded(5_000)).toBe(true);
  });
});
