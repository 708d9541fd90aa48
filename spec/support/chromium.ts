import { existsSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The chromium executable on the PATH, if any (Debian's `chromium`: no browser is downloaded here). */
function findChromium(): string | undefined {
  for (const folder of (process.env['PATH'] ?? '').split(delimiter)) {
    for (const name of ['chromium', 'chromium-browser']) {
      const file = join(folder, name);
      if (folder !== '' && existsSync(file) && statSync(file).isFile()) return file;
    }
  }
  return undefined;
}

/** What the browser specs give playwright-core's `chromium.launch({ executablePath })`. */
export const executablePath = findChromium();

/** A test that needs the browser: skipped where there is none. */
export const browserTest = executablePath === undefined ? it.skip : it;
