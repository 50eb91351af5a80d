import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's chromium package (test/env/setup installs it); ARBITER_CHROMIUM overrides. */
export const CHROMIUM = process.env.ARBITER_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Headless Chromium through playwright-core. A missing browser fails the suite with the
 * way to get one: the console tests are never skipped.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: run \`bash test/env/setup\` (installs the Debian package chromium) or set ARBITER_CHROMIUM to a Chromium binary`,
    );
  }
  // --no-sandbox: tests run as root in CI, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
}

/** Everything the page reports as an error: console errors, uncaught exceptions. */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`page: ${error.message}`));
  return errors;
}

/** A Chromium page on the console at `url`, signed in with `key`, and the errors it reports. */
export async function consoleSignedIn(
  url: string,
  key: string,
): Promise<{ browser: Browser; page: Page; errors: string[] }> {
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(10_000);
  const errors = collectErrors(page);
  await page.goto(`${url}/console/`);
  await page.getByLabel('API key or bearer token').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  return { browser, page, errors };
}
