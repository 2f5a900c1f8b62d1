// The examples' launcher (packages/examples/test/support/chromium.ts): a package may not import
// another's test files (TypeScript project boundaries), so the page tests of each carry one.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The system's Chromium (Debian's `chromium` package; CI installs it), or CHROMIUM_PATH. */
export function chromiumPath(): string {
  const given = process.env.CHROMIUM_PATH;
  if (given !== undefined && given !== '') return given;
  const found = CANDIDATES.find((p) => existsSync(p));
  if (found === undefined)
    throw new Error(
      'browser tests need Chromium: `apt-get install chromium` (Debian), or set CHROMIUM_PATH',
    );
  return found;
}

/** A headless Chromium with an empty profile; `close()` removes the profile. */
export async function launchChromium(): Promise<{
  context: BrowserContext;
  close(): Promise<void>;
}> {
  const profile = mkdtempSync(join(tmpdir(), 'creek-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
