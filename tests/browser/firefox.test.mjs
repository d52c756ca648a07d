// The browser tests' core cases in Firefox (Debian's firefox-esr, headless, driven by
// puppeteer-core over WebDriver BiDi): the sample trace, a .json and a .json.gz whose exports
// equal the CLI's --json, one of many slices that the reader worker hands over, truncated inputs (a partial report with the diagnostic), and no
// request while a trace is read. Run through ./run.sh, or directly with
// FIREFOX=/usr/bin/firefox-esr DIST=... TRACESIGHT_BIN=... node --test firefox.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';
import { writeFixtures, writeBigTrace } from './fixture.mjs';
import { serve } from './serve.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const DIST = path.resolve(process.env.DIST || path.join(ROOT, 'dist'));
const CLI = process.env.TRACESIGHT_BIN || path.join(ROOT, 'target/release/tracesight');
const FIREFOX = process.env.FIREFOX || '/usr/bin/firefox-esr';
// The site's worker scripts, which each analysis worker (and its reader worker) loads from the
// page's origin: the only requests allowed while a trace is read.
const WORKER_FILES = ['worker.js', 'pkg/worker.js', 'pkg/worker_bg.wasm', 'reader.js'];

let site, browser, tmp, downloads, fixtures;

/** Every console message of the pages (Firefox hands on its workers' too, the reader's
 *  included), with the seconds since the tests began: shown when a wait fails, and kept in
 *  target/browser-firefox-console.log, which a hang cannot lose. */
const T0 = Date.now();
const CONSOLE_LOG = path.join(ROOT, 'target/browser-firefox-console.log');
const consoleLines = [];
function logConsole(line) {
  const stamped = `${((Date.now() - T0) / 1000).toFixed(1)}s ${line}`;
  consoleLines.push(stamped);
  try { fs.appendFileSync(CONSOLE_LOG, stamped + '\n'); } catch { /* no target/: kept in memory only */ }
}

before(async () => {
  assert.ok(fs.existsSync(path.join(DIST, 'index.html')), `no site in ${DIST}: run scripts/build-web.sh`);
  fs.rmSync(CONSOLE_LOG, { force: true });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tracesight-firefox-'));
  downloads = path.join(tmp, 'downloads');
  fs.mkdirSync(downloads);
  fixtures = writeFixtures(tmp);
  site = await serve(DIST);
  browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX,
    headless: true,
    protocol: 'webDriverBiDi',
    // Exports are saved to `downloads` without a dialog, as a user who set that would have them.
    extraPrefsFirefox: {
      'browser.download.folderList': 2,
      'browser.download.dir': downloads,
      'browser.download.useDownloadDir': true,
      'browser.download.always_ask_before_handling_new_types': false,
      'browser.helperApps.neverAsk.saveToDisk': 'application/json',
    },
  });
  console.log(`# ${await browser.version()}`);
});

after(async () => {
  await browser?.close();
  site?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** Waits for `selector`; when it does not come, says what the page showed instead and what
 *  the console said. */
async function waitFor(page, selector, timeout) {
  try {
    await page.waitForSelector(selector, { timeout });
  } catch (e) {
    const shown = await page.$eval('body', (b) => b.innerText.slice(0, 600)).catch((x) => `(page unreadable: ${x.message})`);
    throw new Error(`${selector} not shown in ${timeout / 1000} s (${e.message}); the page shows: ${JSON.stringify(shown)}; ` +
      `console, last 20: ${JSON.stringify(consoleLines.slice(-20))}`);
  }
}

/** The per-test limit: a case that takes longer fails with what it waited for, rather than
 *  leaving the run to the runner's overall timeout. */
const CASE = { timeout: 300_000 };

/** A fresh browser context on the page, its worker ready; records console errors, page errors
 *  and every request the browser makes. */
async function open() {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  const errors = [];
  const requests = [];
  page.on('console', (m) => {
    logConsole(`${m.type()}: ${m.text()}`);
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => {
    logConsole(`pageerror: ${e}`);
    errors.push(String(e));
  });
  // data: and blob: URLs are no request (Firefox loads a font of its own as data:).
  page.on('request', (r) => { if (!/^(data|blob):/.test(r.url())) requests.push(r.url()); });
  await page.goto(site.url);
  // Generous: on a loaded 2-core machine the worker's start (compile, warm-up) once took a minute.
  await waitFor(page, '[data-testid=drop-zone][data-ready=true]', 180_000);
  return { context, page, errors, requests };
}

/** What was asked for since `browserBefore` / `serverBefore`, less the site's worker scripts:
 *  by the browser's own account and by the server's. */
function requestsSince(requests, browserBefore, serverBefore) {
  const worker = WORKER_FILES.map((f) => site.url + f);
  const served = WORKER_FILES.map((f) => new URL(site.url + f).pathname);
  return {
    browser: requests.slice(browserBefore).filter((u) => !worker.includes(u)),
    server: site.requests.slice(serverBefore).filter((p) => !served.includes(p)),
  };
}

/** The exported report's text: presses Export JSON and waits for the saved file. */
async function exportJson(page) {
  const already = new Set(fs.readdirSync(downloads));
  await page.click('[data-testid=export-json]');
  const deadline = Date.now() + 30_000;
  for (;;) {
    const names = fs.readdirSync(downloads);
    const saved = names.filter((f) => !already.has(f) && f.endsWith('.json'));
    // Firefox writes to a .part file and renames it when done, but may first create the .json
    // empty as a placeholder (an export once read as empty): whole once no .part is left.
    if (saved.length === 1 && !names.some((f) => f.endsWith('.part'))) {
      const file = path.join(downloads, saved[0]);
      if (fs.statSync(file).size > 0) return fs.readFileSync(file, 'utf8');
    }
    assert.ok(Date.now() < deadline, `no export saved in ${downloads}: ${fs.readdirSync(downloads)}`);
    await new Promise((ok) => setTimeout(ok, 50));
  }
}

/** Opens `file` through the file input, waits for `expect`, checks that reading it made no
 *  request, and returns the exported report (null for the error screen). */
async function analyse(page, requests, file, { expect = 'summary' } = {}) {
  const before = [requests.length, site.requests.length];
  const input = await page.$('[data-testid=file-input]');
  await input.uploadFile(file);
  await waitFor(page, `[data-testid=${expect}]`, 120_000);
  assert.deepEqual(requestsSince(requests, ...before), { browser: [], server: [] }, 'the page made requests while reading a trace');
  if (expect !== 'summary') return null;
  const text = await exportJson(page);
  assert.deepEqual(requestsSince(requests, ...before), { browser: [], server: [] }, 'exporting made a request');
  return text;
}

function cliJson(file) {
  try {
    // Bounded: a synchronous call that never returned would stall every timer of the runner.
    return execFileSync(CLI, ['--json', file], { encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'ignore'], timeout: 120_000 });
  } catch (e) {
    if (e.signal) throw new Error(`the CLI did not finish on ${file} in 120 s`);
    return e.stdout; // a cut file: the CLI prints the partial report and exits non-zero
  }
}

/** The exported report equals the CLI's --json on the same file (skipped without the CLI). */
function sameAsCli(t, web, file) {
  if (!fs.existsSync(CLI)) {
    t.diagnostic(`CLI not found at ${CLI}: comparing with the CLI skipped`);
    return;
  }
  assert.equal(web, cliJson(file), `${path.basename(file)}: Firefox's export differs from the CLI --json`);
}

const text = (page, id) => page.$eval(`[data-testid=${id}]`, (e) => e.textContent);

test('Firefox: the sample trace shows the report views, with no console error', CASE, async () => {
  const { context, page, errors, requests } = await open();
  const before = requests.length;
  await page.click('[data-testid=sample-button]');
  for (const id of ['summary', 'bucket-table', 'attention-backend', 'top-kernels', 'top-ops', 'hints']) {
    await waitFor(page, `[data-testid=${id}]`, 60_000);
  }
  // The sample comes from the page's own origin, nowhere else.
  const others = requests.slice(before).filter((u) => !u.startsWith(site.origin + '/'));
  assert.deepEqual(others, []);
  assert.match(await text(page, 'summary'), /NVIDIA H100/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('Firefox: a .json and a .json.gz: the export equals the CLI --json', CASE, async (t) => {
  const { context, page, errors, requests } = await open();
  for (const file of [fixtures.plain, fixtures.gz]) {
    const web = await analyse(page, requests, file);
    sameAsCli(t, web, file);
    assert.equal(JSON.parse(web).traces[0].attention.backend, 'flash');
    await page.click('.brand');
    await waitFor(page, '[data-testid=drop-zone]', 30_000);
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('Firefox: a 20 MB .json is read in slices by the reader worker: the export equals the CLI --json', CASE, async (t) => {
  const { context, page, errors, requests } = await open();
  const big = path.join(tmp, 'slices.pt.trace.json');
  writeBigTrace(big, 20);
  const web = await analyse(page, requests, big);
  sameAsCli(t, web, big);
  // Slices of 1, 2, 4, 8 and 16 MB, all read by the reader worker, none by the analysis worker.
  const readHere = await page.$eval('.report', (e) => e.dataset.workerSlicesReadHere);
  assert.equal(readHere, '0', 'the analysis worker read slices itself beside a working reader');
  assert.deepEqual(errors, []);
  fs.rmSync(big);
  await context.close();
});

test('Firefox: truncated .json and .json.gz: a partial report with the diagnostic, equal to the CLI', CASE, async (t) => {
  const { context, page, errors, requests } = await open();
  const cuts = [];
  for (const [from, name] of [[fixtures.plain, 'cut.pt.trace.json'], [fixtures.gz, 'cut.pt.trace.json.gz']]) {
    const whole = fs.readFileSync(from);
    const cut = path.join(tmp, name);
    fs.writeFileSync(cut, whole.subarray(0, Math.floor(whole.length * 0.6)));
    cuts.push(cut);
  }
  for (const cut of cuts) {
    const web = await analyse(page, requests, cut);
    assert.match(await text(page, 'incomplete'), /cut short/);
    assert.match(await text(page, 'diagnostics'), /truncated/);
    assert.ok(JSON.parse(web).traces[0].launch.launched_kernels > 0, 'no kernels in the partial report');
    sameAsCli(t, web, cut);
    await page.click('.brand');
    await waitFor(page, '[data-testid=drop-zone]', 30_000);
  }
  // A good file after the cut ones reads whole.
  await analyse(page, requests, fixtures.gz);
  assert.equal(await page.$('[data-testid=incomplete]'), null);
  assert.deepEqual(errors, []);
  await context.close();
});
