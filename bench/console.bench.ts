import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { launchChromium } from '../test/console/support/browser.js';
import { REPO, startArbiter } from './support/processes.js';
import { percentile, type Report } from './support/report.js';
import type { BenchSettings } from './support/settings.js';

/** The console's assets as they ship: every file of dist/console, raw and gzipped. */
async function assetBytes(): Promise<{ raw: number; gzip: number }> {
  const dir = join(REPO, 'dist/console');
  let raw = 0;
  let gzip = 0;
  for (const name of await readdir(dir, { recursive: true })) {
    const path = join(dir, name);
    if (!(await stat(path)).isFile()) continue;
    const bytes = await readFile(path);
    raw += bytes.length;
    gzip += gzipSync(bytes).length;
  }
  return { raw, gzip };
}

/**
 * 14. The console: the first view (a signed-in reload of the pending queue, until its
 * rows or its empty message show) in headless Chromium against the example server, and
 * the size of what ships. The targets: well under a second, a few hundred KB.
 */
export async function consoleBench(report: Report, settings: BenchSettings): Promise<void> {
  const loads = settings.quick ? 10 : 50;
  const arbiter = await startArbiter({});
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(`${arbiter.url}/console/`);
    await page.getByLabel('API key or bearer token').fill('dev-reviewer-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const shown = page.getByText(/No decision is waiting for review|oldest first/).first();
    await shown.waitFor();
    const ms: number[] = [];
    for (let i = 0; i < loads; i++) {
      const t0 = performance.now();
      await page.reload();
      await shown.waitFor();
      ms.push(performance.now() - t0);
    }
    ms.sort((a, b) => a - b);
    const p50 = percentile(ms, 50);
    report.add({
      benchmark: 'console',
      metric: `first view, signed in (pending queue), p50 of ${loads} reloads`,
      arbiter: p50,
      unit: 'ms',
      target: { text: '< 1000 ms', met: p50 < 1000 },
    });
    report.add({ benchmark: 'console', metric: 'first view, p99', arbiter: percentile(ms, 99), unit: 'ms' });
    const { raw, gzip } = await assetBytes();
    report.add({
      benchmark: 'console',
      metric: 'assets shipped (dist/console), raw',
      arbiter: raw / 1024,
      unit: 'KiB',
      target: { text: '< 300 KiB', met: raw < 300 * 1024 },
    });
    report.add({ benchmark: 'console', metric: 'assets shipped, gzip', arbiter: gzip / 1024, unit: 'KiB' });
  } finally {
    await browser.close();
    await arbiter.stop();
  }
}
