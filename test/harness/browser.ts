/**
 * A real browser for the web view's tests: Debian's `chromium` package (installed by
 * `scripts/install-system-packages.sh`), driven by playwright-core. No browser is downloaded.
 * Headless; `--no-sandbox` because CI runs as root, where Chromium's sandbox refuses to start.
 */
import { execFileSync } from 'node:child_process';
import type { TestContext } from 'node:test';
import { chromium, type Browser } from 'playwright-core';

/** The Chromium executable on PATH, or a clear failure saying how to install it. */
export function chromiumPath(): string {
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      const path = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
      if (path !== '') return path;
    } catch {
      // Not this name.
    }
  }
  throw new Error("no chromium on PATH: install Debian's chromium package (npm run setup does)");
}

/** A headless Chromium closed when the test ends. */
export async function launchBrowser(t: TestContext): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
  t.after(() => browser.close());
  return browser;
}
