import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CoalescedTask } from './coalesced-task.js';

// Fake timers: "once" is checked after every timer due has fired, not after a guessed wait.
describe('CoalescedTask', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs once for a burst and once more for requests made while running', async () => {
    let runs = 0;
    let release: (() => void) | undefined;
    const task = new CoalescedTask(
      async () => {
        runs += 1;
        if (runs === 1) await new Promise<void>((resolve) => (release = resolve));
      },
      5,
      () => undefined,
    );
    for (let i = 0; i < 100; i++) task.schedule();
    await vi.runAllTimersAsync();
    expect(runs).toBe(1);
    for (let i = 0; i < 100; i++) task.schedule();
    release?.();
    await vi.runAllTimersAsync();
    await task.idle();
    expect(runs).toBe(2);
    expect(vi.getTimerCount()).toBe(0);
    await task.close();
  });

  it('reports a failing run and keeps working', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const task = new CoalescedTask(
      () => {
        runs += 1;
        if (runs === 1) throw new Error('boom');
      },
      1,
      (err) => errors.push(err),
    );
    task.schedule();
    await vi.runAllTimersAsync();
    expect(errors).toHaveLength(1);
    task.schedule();
    await vi.runAllTimersAsync();
    expect(runs).toBe(2);
    expect(errors).toHaveLength(1);
    await task.close();
  });
});
