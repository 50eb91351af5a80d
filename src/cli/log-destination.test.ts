import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { asyncLogDestination } from './log-destination.js';

describe('asyncLogDestination', () => {
  it("writes pino's lines whole and in order, non-ASCII included, also many in one tick", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'arbiter-log-destination-'));
    const fd = openSync(join(dir, 'out.log'), 'w');
    try {
      const expected: string[] = [];
      const reference = pino(
        { base: { service: 'arbiter' }, timestamp: false },
        { write: (line) => expected.push(line) },
      );
      const logger = pino({ base: { service: 'arbiter' }, timestamp: false }, asyncLogDestination(fd));
      for (let i = 0; i < 2_000; i++) {
        for (const log of [reference, logger])
          log.info({ request_id: `r-${i}`, path: '/ä/"x"', status: 200 }, 'request');
      }
      const text = expected.join('');
      for (let i = 0; i < 100 && readFileSync(join(dir, 'out.log'), 'utf8').length < text.length; i++)
        await sleep(20);
      expect(readFileSync(join(dir, 'out.log'), 'utf8')).toBe(text);
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
