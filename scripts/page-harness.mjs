// What scripts/bench-page.mjs and scripts/profile-page.mjs share: the browser-test harness's
// puppeteer-core and static server, the browsers as both launch them, and a page that sees one
// core (one analysis worker) and is ready for a file.
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BROWSER_TESTS = path.join(ROOT, 'tests/browser');
export const puppeteer = createRequire(path.join(BROWSER_TESTS, 'package.json'))('puppeteer-core');
export const { serve } = await import(path.join(BROWSER_TESTS, 'serve.mjs'));
export const DIST = path.resolve(process.env.DIST || path.join(ROOT, 'dist'));
export const EXE = { chromium: process.env.CHROMIUM || '/usr/bin/chromium', firefox: process.env.FIREFOX || '/usr/bin/firefox-esr' };

/** Headless Chromium (CHROMIUM_ARGS: more flags, space-separated), or Firefox over WebDriver
 * BiDi (FIREFOX_PREFS: a JSON object of prefs). */
export function launch(name) {
  if (name === 'firefox') {
    return puppeteer.launch({ browser: 'firefox', executablePath: EXE.firefox, headless: true, protocol: 'webDriverBiDi', extraPrefsFirefox: JSON.parse(process.env.FIREFOX_PREFS || '{}') });
  }
  return puppeteer.launch({
    executablePath: EXE.chromium, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ...(process.env.CHROMIUM_ARGS || '').split(' ').filter(Boolean)],
  });
}

/** Makes `page` see one core (one analysis worker); then `init` (a function run in the page
 * before its scripts, as `evaluateOnNewDocument` runs it), when given. */
export async function oneCore(page, init) {
  await seeCores(page, 1, init);
}

/** Makes `page` see `cores` cores (a large file is read by that many workers), then `init`. */
export async function seeCores(page, cores, init) {
  await page.evaluateOnNewDocument((n) => {
    Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => n });
  }, cores);
  if (init) await page.evaluateOnNewDocument(init);
}

/** Opens the site in `page` and waits until it takes a file. */
export async function ready(page, site) {
  await page.goto(site.url);
  await page.waitForSelector('[data-testid=drop-zone][data-ready=true]', { timeout: 120_000 });
}
