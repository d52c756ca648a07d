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
    // Traces opened by ?trace= URLs: a slow stream (to see progress), an HTML page, an HTML
    // body sent as JSON, and (by default) 404.
    const traces = BASE + 't/';
    if (url.pathname.startsWith(traces)) {
      const name = url.pathname.slice(traces.length);
      if (name === 'fixture-gz.pt.trace.json.gz') {
        const body = fs.readFileSync(fixtures.gz);
        res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': body.length });
        const parts = 8, step = Math.ceil(body.length / parts);
        let i = 0;
        const next = () => {
          if (i >= parts) { res.end(); return; }
          res.write(body.subarray(i * step, (i + 1) * step));
          i++;
          setTimeout(next, 250);
        };
        next();
      } else if (name === 'login.html') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Sign in</title><form>Sign in</form>');
      } else if (name === 'sneaky.json') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' }).end('\n  <html><body>Not here</body></html>');
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('no such trace');
      }
      return;
    }
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
  // Two ranks side by side; a share link keeps the pair.
  await page.getByTestId('compare').selectOption('1');
  await page.getByTestId('compare-table').waitFor();
  assert.match(await page.getByTestId('compare-table').textContent(), /GPU busy.*Difference|Difference.*GPU busy/s);
  await page.getByTestId('compare-table').screenshot({ path: path.join(ARTIFACTS, 'compare-dark.png') });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  await page.getByTestId('share-link').click();
  const second = await context.newPage();
  await second.goto(await readClipboard(page));
  await second.getByTestId('compare-table').waitFor();
  await second.close();
  await shot(page, 'ranks-dark');
  await shot(page, 'report-dark-full', { fullPage: true });
  if (haveCli()) assert.equal(web, cliJson(files));
  else t.diagnostic('CLI not found: comparing with the CLI skipped');
  assert.equal(JSON.parse(web).traces.length, 2);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the 8 ranks of one job: ranks, spread and the straggler', async (t) => {
  const dir = path.join(SHARED, 'dlrm-8rank-v100');
  if (!fs.existsSync(dir)) {
    t.skip('../shared/traces is absent: the 8-rank job is not available');
    return;
  }
  const { context, page, errors, requests } = await open();
  const files = fs.readdirSync(dir).sort().map((f) => path.join(dir, f));
  const web = await analyse(page, requests, files);
  await page.getByTestId('ranks').waitFor();
  assert.equal(await page.locator('[data-testid=ranks] tbody tr').count(), 8);
  assert.match(await page.getByTestId('job-verdict').textContent(), /8 ranks of world size 8, one job/);
  assert.match(await page.getByTestId('straggler').textContent(), /^rank 7 arrived last/);
  assert.ok(await page.locator('[data-testid=collectives] tbody tr').count() >= 8);
  await page.locator('section:has([data-testid=ranks])').screenshot({ path: path.join(ARTIFACTS, 'ranks-dlrm.png') });
  if (haveCli()) assert.equal(web, cliJson(files));
  assert.deepEqual(errors, []);
  await context.close();
});

test('two files and compare: the diff names the backend change', async () => {
  const { context, page, errors, requests } = await open();
  const web = await analyse(page, requests, [fixtures.plain, fixtures.math]);
  if (haveCli()) assert.equal(web, cliJson([fixtures.plain, fixtures.math]));
  await page.getByTestId('compare').selectOption('1');
  await page.getByTestId('compare-table').waitFor();
  const flash = { label: `rank 0 · ${path.basename(fixtures.plain)}` };
  const math = { label: `rank 0 · ${path.basename(fixtures.math)}` };
  await page.getByTestId('compare-a').selectOption(flash);
  await page.getByTestId('compare-b').selectOption(math);
  assert.match(await page.getByTestId('diff-verdict').textContent(), /math instead of flash/);
  assert.ok(await page.locator('[data-testid=diff-kernels] tbody tr').count() > 0);
  // Swapping A and B swaps the change.
  await page.getByTestId('compare-a').selectOption(math);
  await page.getByTestId('compare-b').selectOption(flash);
  assert.match(await page.getByTestId('diff-verdict').textContent(), /flash instead of math/);
  await page.getByTestId('compare-table').screenshot({ path: path.join(ARTIFACTS, 'compare.png') });
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
  await page.waitForFunction(() => /MB of .*MB\/s/.test(document.querySelector('[data-testid=progress]')?.textContent || ''), null, { timeout: 20_000 });
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
  assert.match(link, /#s=[A-Za-z0-9_-]+$/);
  const second = await context.newPage();
  await second.goto(link);
  await second.getByTestId('summary').waitFor();
  assert.equal(await second.getByTestId('attention-backend').getAttribute('data-backend'), 'flash');
  assert.deepEqual(errors, []);
  await context.close();
});

/** base64url(deflate-raw(json)): a link fragment made by hand, as an attacker would. */
function fragment(kind, obj) {
  const data = typeof obj === 'string' ? obj : JSON.stringify(obj);
  return `#${kind}=` + zlib.deflateRawSync(Buffer.from(data)).toString('base64url');
}

async function readClipboard(page) {
  return page.evaluate(() => navigator.clipboard.readText());
}

test('?trace= from the site origin opens the report with progress; its link keeps the view', async (t) => {
  const { context, page, errors, requests } = await open({ hash: '?trace=t/fixture-gz.pt.trace.json.gz' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const progress = page.getByTestId('progress');
  await progress.waitFor();
  assert.match(await progress.textContent(), /fixture-gz\.pt\.trace\.json\.gz/);
  await shot(page, 'trace-url-progress');
  await page.getByTestId('summary').waitFor({ timeout: 60_000 });
  assert.ok(requests.every((u) => u.startsWith(origin)), `requests left the origin: ${requests}`);
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-json').click()]);
  const web = fs.readFileSync(await download.path(), 'utf8');
  if (haveCli()) assert.equal(web, cliJson([fixtures.gz]));
  else t.diagnostic('CLI not found: comparing with the CLI skipped');
  // Change the view, copy the link: ?trace= stays, the fragment holds only the view.
  await page.locator('[data-testid=bucket-table] tbody tr').first().locator('button').click();
  await page.locator('[data-testid=top-kernels] thead button', { hasText: 'Count' }).click();
  await page.getByTestId('share-link').click();
  const link = await readClipboard(page);
  assert.match(link, /\?trace=t%2Ffixture-gz\.pt\.trace\.json\.gz#v=[A-Za-z0-9_-]+$|\?trace=t\/fixture-gz\.pt\.trace\.json\.gz#v=[A-Za-z0-9_-]+$/);
  assert.ok(link.length < 200, `view-only link of ${link.length} characters`);
  const second = await context.newPage();
  await second.goto(link);
  await second.getByTestId('summary').waitFor({ timeout: 60_000 });
  assert.equal(await second.locator('section:has([data-testid=top-kernels]) .chip').count(), 1);
  assert.equal(await second.locator('[data-testid=top-kernels] th[aria-sort=descending]').textContent(), 'Count▼');
  assert.deepEqual(errors, []);
  await context.close();
});

test('?trace= failures: 404, an HTML page, HTML sent as JSON, a host outside the list', async () => {
  const cases = [
    ['t/missing.json.gz', /Trace not found \(HTTP 404\)/, 'trace-url-404'],
    ['t/login.html', /returned a web page, not a trace/, 'trace-url-html'],
    ['t/sneaky.json', /returned a web page, not a trace/, null],
    ['https://traces.example.com/rank0.json.gz', /may not fetch traces from that host/, 'trace-url-host'],
  ];
  for (const [url, message, name] of cases) {
    const { context, page, errors, requests } = await open({ hash: '?trace=' + encodeURIComponent(url) });
    const screen = page.getByTestId('error');
    await screen.waitFor({ timeout: 30_000 });
    assert.match(await screen.textContent(), message, url);
    assert.ok(requests.every((u) => u.startsWith(origin)), `${url}: requests left the origin: ${requests}`);
    if (name) await shot(page, name);
    // The browser itself logs the 404 response; nothing else may go wrong.
    assert.deepEqual(errors.filter((e) => !/404/.test(e)), [], url);
    await context.close();
  }
});

test('a summary link reopens exactly the same view', async () => {
  const { context, page, errors } = await open();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  await page.getByTestId('file-input').setInputFiles(fixtures.gz);
  await page.getByTestId('summary').waitFor({ timeout: 60_000 });
  // Sort the ops by name, search the kernels, unfold a kernel and a bucket.
  await page.locator('[data-testid=top-ops] thead button', { hasText: 'Op' }).click();
  await page.locator('section:has([data-testid=top-kernels]) input[type=search]').fill('kernel');
  await page.locator('[data-testid=top-kernels] tbody details summary').first().click();
  await page.locator('[data-testid=bucket-table] tbody details summary').nth(1).click();
  const snapshot = async (p) => p.evaluate(() => ({
    kernels: [...document.querySelectorAll('[data-testid=top-kernels] tbody tr')].map((r) => r.textContent),
    ops: [...document.querySelectorAll('[data-testid=top-ops] tbody tr')].map((r) => r.textContent),
    open: [...document.querySelectorAll('details')].map((d) => d.open),
    query: document.querySelector('section:has([data-testid=top-kernels]) input[type=search]').value,
    sort: [...document.querySelectorAll('th[aria-sort]')].map((t) => t.getAttribute('aria-sort')),
  }));
  const before = await snapshot(page);
  assert.ok(before.open.some((o) => o), 'nothing unfolded');
  await page.getByTestId('share-link').click();
  const link = await readClipboard(page);
  assert.match(link, /#s=[A-Za-z0-9_-]+$/);
  const second = await context.newPage();
  await second.goto(link);
  await second.getByTestId('summary').waitFor();
  assert.deepEqual(await snapshot(second), before);
  await shot(second, 'share-link-view');
  assert.deepEqual(errors, []);
  await context.close();
});

test('hostile fragments: error screen, nothing from the link runs', async () => {
  const evil = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">';
  const trace = (extra = {}) => ({ f: evil + '.json', n: 1, d: { n: evil }, u: [10, 5, 10, 5, 5, 0, 0, 0, 0],
    b: [{ i: 'other', t: 10, c: 1, k: [[evil, 10, 1]] }], a: { b: 'none' },
    tk: [{ n: [evil, evil + ' short'], t: 10, c: 1, x: 10, b: 'other', o: evil }], to: [{ n: evil, t: 10, c: 1, b: 'other' }],
    h: [{ i: 'gpu_idle', s: 'critical', m: evil, e: [evil], f: '`' + evil + '`' }], ...extra });
  const link = (t) => ({ v: 1, s: { k: { q: evil } }, r: { v: evil, t: [t] } });
  // Script tags in names are data: shown as text, never run.
  {
    const { context, page, errors } = await open({ hash: fragment('s', link(trace())) });
    await page.getByTestId('summary').waitFor();
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.equal(await page.locator('script:not([type=module]), img[src=x]').count(), 0);
    assert.match(await page.locator('[data-testid=top-kernels]').textContent(), /<script>window\.__pwned=1<\/script>/);
    await shot(page, 'hostile-names-as-text');
    assert.deepEqual(errors, []);
    await context.close();
  }
  const cases = [
    ['huge counts', fragment('s', link(trace({ n: 1e300, c: 18446744073709551615 })))],
    ['many rows', fragment('s', link(trace({ tk: Array(5000).fill(trace().tk[0]) })))],
    ['unknown keys', fragment('s', { ...link(trace()), x: '<b>hi</b>' })],
    ['not deflate', '#s=' + Buffer.from(evil).toString('base64url')],
    ['truncated', fragment('s', link(trace())).slice(0, 60)],
    ['a deflate bomb', fragment('s', JSON.stringify({ v: 1, s: {}, r: 'A'.repeat(8 << 20) }))],
    // Chromium refuses URLs over 2 MB before the page sees them (checked below); the largest
    // fragment it carries reaches the decoder, which refuses it by its length.
    ['2 MB of data', '#s=' + 'A'.repeat((2 << 20) - 200)],
  ];
  for (const [what, hash] of cases) {
    const { context, page, errors } = await open({ hash });
    const screen = page.getByTestId('error');
    await screen.waitFor({ timeout: 30_000 });
    assert.match(await screen.textContent(), /This link cannot be opened/, what);
    assert.equal(await page.evaluate(() => window.__pwned), undefined, what);
    if (what === 'huge counts') await shot(page, 'hostile-link-error');
    assert.deepEqual(errors, [], what);
    await context.close();
  }
  // 10 MB of data: the browser does not even navigate (the decoder's own bound is tested by
  // cargo test: tests/share.rs).
  const { context, page } = await open();
  const refused = await page.goto(origin + BASE + '#s=' + 'A'.repeat(10 << 20)).then(() => false, () => true);
  assert.ok(refused || await page.getByTestId('error').count() === 1, '10 MB link neither refused nor shown as an error');
  await context.close();
});

test('Copy as Markdown matches the golden file; CSV per table', async () => {
  const { context, page, errors } = await open();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  for (const name of ['current_schema', 'math_sdpa']) {
    await page.getByTestId('file-input').setInputFiles(path.join(ROOT, 'tests/fixtures', `${name}.json`));
    await page.getByTestId('summary').waitFor({ timeout: 60_000 });
    await page.getByTestId('copy-markdown').click();
    const md = await readClipboard(page);
    assert.equal(md + '\n', fs.readFileSync(path.join(ROOT, 'tests/golden', `${name}.md`), 'utf8'), name);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('csv-kernels').click()]);
    assert.equal(download.suggestedFilename(), `${name}.kernels.csv`);
    const csv = fs.readFileSync(await download.path(), 'utf8');
    assert.match(csv, /^rank,name,short,time_us,pct,count,mean_us,max_us,bucket,launching_op\r\n/);
    await page.locator('.brand').click();
  }
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
  // A gzip bomb (~2 MB inflating to 768 MiB, 15M tiny kernels): read to its end with progress,
  // bounded by the row limit, then a partial report.
  const bomb = path.join(tmp, 'bomb.json.gz');
  fs.writeFileSync(bomb, gzipBomb(12));
  await page.getByTestId('file-input').setInputFiles(bomb);
  await page.getByTestId('summary').waitFor({ timeout: 240_000 });
  await shot(page, 'gzip-bomb');
  assert.match(await page.getByTestId('incomplete').first().textContent(), /counted but not analysed/);
  const memory = Number(await page.locator('[data-worker-wasm-bytes]').first().getAttribute('data-worker-wasm-bytes').catch(() => '0'));
  if (memory) assert.ok(memory < 1536 * (1 << 20), `worker wasm memory ${memory}`);
  await goodFileAfterwards(page);
  assert.deepEqual(errors, []);
  await context.close();
});
