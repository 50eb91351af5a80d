import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { CoalescedTask } from './coalesced-task.js';

describe('CoalescedTask', () => {
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
    await sleep(20);
    expect(runs).toBe(1);
    for (let i = 0; i < 100; i++) task.schedule();
    release?.();
    await sleep(30);
    await task.idle();
    expect(runs).toBe(2);
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
    await sleep(10);
    task.schedule();
    await sleep(10);
    expect(runs).toBe(2);
    expect(errors).toHaveLength(1);
    await task.close();
  });
});
