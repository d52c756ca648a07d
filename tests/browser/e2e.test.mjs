// End-to-end tests of the built site (dist/) in real headless Chromium.
// Run through ./run.sh (builds the site and the CLI first), or directly with
// DIST=... TRACESIGHT_BIN=... node --test e2e.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { writeFixtures, writeBigTrace } from './fixture.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const DIST = path.resolve(process.env.DIST || path.join(ROOT, 'dist'));
const CLI = process.env.TRACESIGHT_BIN || path.join(ROOT, 'target/release/tracesight');
const SHARED = path.resolve(ROOT, '../shared/traces');
const ARTIFACTS = path.join(ROOT, 'tests/artifacts');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
// Served from a sub-path, as on GitHub Pages: every URL in the site must be relative.
const BASE = '/sub/tracesight/';
const REAL = [
  'h100-bert-small-flash.json.gz',
  'mi300x-bert-small-attn-fwd.json.gz',
  'old-2020-resnet50-bare-array.pt.trace.json.gz',
  'cpu-only-rank34.pt.trace.json.gz',
];

let server, origin, browser, tmp, fixtures;

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css',
  '.svg': 'image/svg+xml', '.json': 'application/json', '.gz': 'application/gzip' };

before(async () => {
  assert.ok(fs.existsSync(path.join(DIST, 'index.html')), `no site in ${DIST}: run scripts/build-web.sh`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tracesight-e2e-'));
  fixtures = writeFixtures(tmp);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (!url.pathname.startsWith(BASE)) { res.writeHead(404).end(); return; }
    let rel = decodeURIComponent(url.pathname.slice(BASE.length)) || 'index.html';
    let file = path.join(DIST, rel);
    // Until the real sample is in www/, serve the project's own fixture in its place.
    if (rel === 'sample-trace.json.gz' && !fs.existsSync(file)) file = fixtures.gz;
    if (!file.startsWith(DIST) && file !== fixtures.gz || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end(); return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  origin = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

after(async () => {
  await browser?.close();
  server?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** Opens the page and waits until the worker is ready; records console errors and requests. */
async function open({ colorScheme = 'light', hash = '' } = {}) {
  const context = await browser.newContext({ acceptDownloads: true, colorScheme, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  const requests = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  context.on('request', (r) => requests.push(r.url()));
  const t0 = Date.now();
  await page.goto(origin + BASE + hash);
  let firstScreenMs = 0;
  if (!hash) {
    await page.getByTestId('drop-zone').waitFor();
    firstScreenMs = Date.now() - t0;
    await page.locator('[data-testid=drop-zone][data-ready=true]').waitFor();
  }
  return { context, page, errors, requests, firstScreenMs };
}

async function shot(page, name, opts = {}) {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), ...opts });
}

/** Opens `files` through the file input and returns the report's exported JSON text. */
async function analyse(page, requests, files, { expect = 'summary' } = {}) {
  const before = requests.length;
  await page.getByTestId('file-input').setInputFiles(files);
  await page.getByTestId(expect).first().waitFor({ timeout: 60_000 });
  assert.deepEqual(requests.slice(before), [], 'the page made requests while analysing a trace');
  if (expect !== 'summary') return null;
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-json').click()]);
  const text = fs.readFileSync(await download.path(), 'utf8');
  assert.deepEqual(requests.slice(before), [], 'exporting made a request');
  return text;
}

function cliJson(files) {
  return execFileSync(CLI, ['--json', ...files], { encoding: 'utf8', maxBuffer: 1 << 28 });
}

function haveCli() {
  return fs.existsSync(CLI);
}

test('first screen renders quickly with no console errors, light and dark', async () => {
  for (const scheme of ['light', 'dark']) {
    const { context, page, errors, firstScreenMs } = await open({ colorScheme: scheme });
    await page.getByTestId('drop-zone').waitFor();
    assert.ok(await page.getByTestId('sample-button').isVisible());
    console.log(`# first screen (${scheme}): drop zone shown ${firstScreenMs} ms after navigation`);
    // The target is 1 s from localhost; allow slack for a loaded CI machine.
    assert.ok(firstScreenMs < 3000, `first screen took ${firstScreenMs} ms`);
    await shot(page, `start-${scheme}`);
    // Keyboard: Tab reaches the file picker and the sample button.
    const reached = [];
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('Tab');
      reached.push(await page.evaluate(() => document.activeElement?.dataset?.testid || document.activeElement?.tagName));
    }
    assert.ok(reached.includes('file-input') && reached.includes('sample-button'), `Tab order: ${reached}`);
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test('sample button shows every report view', async () => {
  const { context, page, errors } = await open();
  await page.getByTestId('sample-button').click();
  for (const id of ['summary', 'bucket-table', 'attention-backend', 'top-kernels', 'top-ops', 'hints']) {
    await page.getByTestId(id).first().waitFor({ timeout: 60_000 });
  }
  await shot(page, 'report-top');
  await shot(page, 'report-full', { fullPage: true });
  await page.getByTestId('summary').screenshot({ path: path.join(ARTIFACTS, 'summary.png') });
  await page.locator('section:has([data-testid=bucket-table])').screenshot({ path: path.join(ARTIFACTS, 'buckets.png') });
  await page.locator('section:has([data-testid=attention-backend])').screenshot({ path: path.join(ARTIFACTS, 'attention.png') });
  await page.getByTestId('hints').screenshot({ path: path.join(ARTIFACTS, 'hints.png') });
  // Clicking a bucket filters the kernel table to it.
  const firstBucket = page.locator('[data-testid=bucket-table] tbody tr').first().locator('button');
  const bucket = (await firstBucket.textContent()).trim();
  await firstBucket.click();
  const cats = await page.locator('[data-testid=top-kernels] tbody tr td:nth-child(8)').allTextContents();
  assert.ok(cats.length > 0 && cats.every((c) => c.trim() === bucket), `kernel table not filtered to ${bucket}: ${cats}`);
  await page.locator('section:has([data-testid=top-kernels])').screenshot({ path: path.join(ARTIFACTS, 'top-kernels-filtered.png') });
  // Keyboard: a focused bar toggles the same filter with Enter.
  await page.locator('svg.bars g[role=button]').first().focus();
  await page.keyboard.press('Enter');
  assert.equal(await page.locator('section:has([data-testid=top-kernels]) .chip').count(), 0);
  await page.keyboard.press('Enter');
  assert.equal(await page.locator('section:has([data-testid=top-kernels]) .chip').count(), 1);
  // Search runs over full names.
  await page.locator('section:has([data-testid=top-kernels]) .chip-x').click();
  await page.locator('section:has([data-testid=top-kernels]) input[type=search]').fill('zzz-no-such-kernel');
  assert.equal(await page.locator('[data-testid=top-kernels] tbody tr').count(), 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test('project fixture (.json and .json.gz): export equals the CLI --json', async (t) => {
  const { context, page, errors, requests } = await open();
  for (const file of [fixtures.plain, fixtures.gz]) {
    const web = await analyse(page, requests, file);
    if (haveCli()) {
      assert.equal(web, cliJson([file]), `${path.basename(file)}: web export differs from the CLI`);
    } else {
      t.diagnostic(`CLI not found at ${CLI}: comparing with the CLI skipped`);
    }
    assert.equal(JSON.parse(web).traces[0].attention.backend, 'flash');
    await page.locator('.brand').click();
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('math attention backend: verdict, reasons and the sdpa_kernel fix', async (t) => {
  const { context, page, errors, requests } = await open();
  const web = await analyse(page, requests, fixtures.math);
  if (haveCli()) assert.equal(web, cliJson([fixtures.math]));
  else t.diagnostic('CLI not found: comparing with the CLI skipped');
  const badge = page.getByTestId('attention-backend');
  assert.equal(await badge.getAttribute('data-backend'), 'math');
  const section = page.locator('section:has([data-testid=attention-backend])');
  assert.match(await section.textContent(), /sdpa_kernel\(SDPBackend\.FLASH_ATTENTION\)/);
  await section.screenshot({ path: path.join(ARTIFACTS, 'attention-math.png') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('real traces: export equals the CLI --json', async (t) => {
  if (!fs.existsSync(SHARED)) { t.skip(`${SHARED} is absent (real traces exist only on developer machines and CI)`); return; }
  if (!haveCli()) { t.skip(`CLI not found at ${CLI} (build it or set TRACESIGHT_BIN)`); return; }
  const { context, page, errors, requests } = await open();
  for (const name of REAL) {
    const file = path.join(SHARED, name);
    const web = await analyse(page, requests, file);
    assert.equal(web, cliJson([file]), `${name}: web export differs from the CLI`);
    const base = name.replace(/\.(pt\.)?trace\.json\.gz$|\.json\.gz$/, '');
    await shot(page, `real-${base}`);
    await page.locator('.brand').click();
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('several files at once: ranks table, export equals the CLI', async (t) => {
  const { context, page, errors, requests } = await open({ colorScheme: 'dark' });
  const files = fs.existsSync(SHARED)
    ? ['h100-bert-small-flash.json.gz', 'mi300x-bert-small-attn-fwd.json.gz'].map((f) => path.join(SHARED, f))
    : [fixtures.plain, fixtures.gz];
  const web = await analyse(page, requests, files);
  await page.getByTestId('ranks').waitFor();
  await shot(page, 'ranks-dark');
  await shot(page, 'report-dark-full', { fullPage: true });
  if (haveCli()) assert.equal(web, cliJson(files));
  else t.diagnostic('CLI not found: comparing with the CLI skipped');
  assert.equal(JSON.parse(web).traces.length, 2);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a text file shows the error screen', async () => {
  const { context, page, errors, requests } = await open();
  const bad = path.join(tmp, 'notes.txt');
  fs.writeFileSync(bad, 'these are my notes, not a trace\n');
  await analyse(page, requests, bad, { expect: 'error' });
  assert.match(await page.getByTestId('error').textContent(), /notes\.txt/);
  await shot(page, 'error');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a truncated .json.gz still shows the report, with the diagnostic', async () => {
  const { context, page, errors, requests } = await open();
  const whole = fs.readFileSync(fixtures.gz);
  const cut = path.join(tmp, 'cut-short.pt.trace.json.gz');
  fs.writeFileSync(cut, whole.subarray(0, Math.floor(whole.length * 0.6)));
  const web = await analyse(page, requests, cut);
  await page.getByTestId('incomplete').waitFor();
  await shot(page, 'truncated');
  if (haveCli()) {
    let cli;
    try { cli = cliJson([cut]); } catch (e) { cli = e.stdout; } // the CLI may exit non-zero
    assert.equal(web, cli);
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('progress shows bytes, MB/s and time left; Cancel returns to the start', async () => {
  const { context, page, errors } = await open();
  const big = path.join(tmp, 'big.pt.trace.json');
  writeBigTrace(big, 400);
  await page.getByTestId('file-input').setInputFiles(big);
  const progress = page.getByTestId('progress');
  await progress.waitFor();
  await page.waitForFunction(() => /MB\/s/.test(document.querySelector('[data-testid=progress]')?.textContent || ''), null, { timeout: 20_000 });
  await shot(page, 'progress');
  assert.match(await progress.textContent(), /MB of .*MB\/s.*left/);
  await page.getByTestId('cancel').click();
  await page.locator('[data-testid=drop-zone][data-ready=true]').waitFor();
  // The fresh worker analyses the next file.
  await page.getByTestId('file-input').setInputFiles(fixtures.gz);
  await page.getByTestId('summary').waitFor({ timeout: 60_000 });
  assert.deepEqual(errors, []);
  await context.close();
});

test('share link opens the report without the trace', async () => {
  const { context, page, errors } = await open();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  await page.getByTestId('file-input').setInputFiles(fixtures.gz);
  await page.getByTestId('summary').waitFor({ timeout: 60_000 });
  await page.getByTestId('share-link').click();
  const link = await page.evaluate(() => navigator.clipboard.readText());
  assert.match(link, /#r=[A-Za-z0-9_-]+$/);
  const second = await context.newPage();
  await second.goto(link);
  await second.getByTestId('summary').waitFor();
  assert.equal(await second.getByTestId('attention-backend').getAttribute('data-backend'), 'flash');
  assert.deepEqual(errors, []);
  await context.close();
});

/** A gzip bomb: `members` gzip members of 64 MiB of tiny kernel events each (compressed once,
 * repeated) between a header member and a closing one: ~3 MB per GiB of JSON. */
function gzipBomb(members) {
  const event = Buffer.from('{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1},');
  const block = Buffer.alloc(Math.floor((64 << 20) / event.length) * event.length);
  for (let i = 0; i < block.length; i += event.length) event.copy(block, i);
  const member = zlib.gzipSync(block, { level: 9 });
  return Buffer.concat([
    zlib.gzipSync('{"traceEvents":['),
    ...Array(members).fill(member),
    zlib.gzipSync('{"ph":"X","cat":"kernel","name":"last","ts":2,"dur":1}]}'),
  ]);
}

/** After a bad file, the next good file still gives a report without a reload. */
async function goodFileAfterwards(page) {
  await page.getByTestId('file-input').setInputFiles(fixtures.gz);
  await page.getByTestId('summary').waitFor({ timeout: 60_000 });
  assert.equal(await page.getByTestId('incomplete').count(), 0);
}

test('hostile input: non-trace JSON, truncated gzip, gzip bomb; a good file works after each', async () => {
  const { context, page, errors, requests } = await open();
  // JSON that is not a trace: the error screen names the file and the problem.
  const notTrace = path.join(tmp, 'config.json');
  fs.writeFileSync(notTrace, '{"model": "bert", "layers": [1, 2, 3]}');
  await analyse(page, requests, notTrace, { expect: 'error' });
  assert.match(await page.getByTestId('error').textContent(), /config\.json.*not a trace: the JSON object has no traceEvents array/);
  await goodFileAfterwards(page);
  // A truncated .json.gz: a partial report with the same `truncated` diagnostic as a cut .json.
  const whole = fs.readFileSync(fixtures.gz);
  const cut = path.join(tmp, 'cut.json.gz');
  fs.writeFileSync(cut, whole.subarray(0, Math.floor(whole.length * 0.5)));
  await analyse(page, requests, cut);
  assert.match(await page.getByTestId('incomplete').first().textContent(), /cut short/);
  await page.getByTestId('diagnostics').locator('summary').click();
  assert.match(await page.getByTestId('diagnostics').textContent(), /truncated/);
  await goodFileAfterwards(page);
  // A gzip bomb (~3 MB inflating to 1 GiB): read to its end with progress, bounded by the
  // row limit, then a partial report.
  const bomb = path.join(tmp, 'bomb.json.gz');
  fs.writeFileSync(bomb, gzipBomb(16));
  await page.getByTestId('file-input').setInputFiles(bomb);
  await page.getByTestId('summary').waitFor({ timeout: 240_000 });
  await shot(page, 'gzip-bomb');
  assert.match(await page.getByTestId('incomplete').first().textContent(), /counted but not analysed/);
  const memory = Number(await page.locator('[data-worker-wasm-bytes]').first().getAttribute('data-worker-wasm-bytes').catch(() => '0'));
  if (memory) assert.ok(memory < 512 * (1 << 20), `worker wasm memory ${memory}`);
  await goodFileAfterwards(page);
  assert.deepEqual(errors, []);
  await context.close();
});
