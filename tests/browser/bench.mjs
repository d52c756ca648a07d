// Worker throughput in headless Chromium: opens each file through the page's file input,
// times input -> report drawn by the page's clock (and input -> the report reaching the page:
// the rest is drawing it; the harness's own total, with Playwright's round trips, beside them),
// and samples the renderer processes' memory (the workers run in
// the page's renderer) to show that memory stays bounded. Each file is read by one worker
// and by WORKERS workers (a large plain file is then split into parts), alternating, and by
// the CLI on one thread, so the ratios come from one run. Not a test: prints a table.
// usage: node bench.mjs FILE... (DIST, CHROMIUM as for the e2e tests; TRACESIGHT_BIN: the
// CLI, default target/release/tracesight; WORKERS=3 (the page reads in parts from three
// cores); RUNS=1: the best of RUNS is kept;
// PICK_AFTER_MS=0: how long after the page is ready the file is picked, as a user takes a
// while: the first worker's warm-up has V8 optimise the parser in the background meanwhile;
// THREADS=1: print each reading's CPU seconds by process and thread)
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DIST = path.resolve(process.env.DIST || path.join(HERE, '../../dist'));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const RUNS = Number(process.env.RUNS || 1);
const WORKERS = Number(process.env.WORKERS || 3);
const PICK_AFTER_MS = Number(process.env.PICK_AFTER_MS || 0);
const CLI = process.env.TRACESIGHT_BIN || path.join(HERE, '../../target/release/tracesight');
const files = process.argv.slice(2);
if (!files.length) { console.error('usage: node bench.mjs FILE...'); process.exit(2); }

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.svg': 'image/svg+xml' };
const server = http.createServer((req, res) => {
  let file = path.join(DIST, decodeURIComponent(new URL(req.url, 'http://x').pathname));
  if (file.endsWith('/')) file += 'index.html';
  if (!file.startsWith(DIST) || !fs.existsSync(file)) { res.writeHead(404).end(); return; }
  res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' });
  fs.createReadStream(file).pipe(res);
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

/** Resident memory (MB) of Chromium's renderer processes: the page and its worker live there. */
function rendererRssMb() {
  let out = '';
  try { out = execFileSync('ps', ['-eo', 'rss=,args='], { encoding: 'utf8', maxBuffer: 1 << 24 }); } catch { return 0; }
  return out.split('\n').filter((l) => l.includes('--type=renderer'))
    .reduce((sum, l) => sum + Number(l.trim().split(/\s+/)[0] || 0), 0) / 1024;
}

/** The browser's processes: pid and command line, from /proc (Linux). */
function browserProcesses() {
  const out = [];
  for (const pid of fs.readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d))) {
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (Number(pid) !== process.pid && cmdline.includes('chrom')) out.push({ pid, cmdline });
    } catch { /* the process ended */ }
  }
  return out;
}

/** CPU seconds (user + system) in a /proc `stat` file. */
function statCpuSecs(stat) {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds used so far by the browser's processes (their ended threads included). */
function browserCpuSecs() {
  let secs = 0;
  for (const { pid } of browserProcesses()) {
    try { secs += statCpuSecs(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { /* the process ended */ }
  }
  return secs;
}

/** CPU seconds so far of each of the browser's threads, by `pid/tid`, with a label: process
 *  kind and thread name (`renderer/DedicatedWorker`). */
function threadCpuSecs() {
  const by = new Map();
  for (const { pid, cmdline } of browserProcesses()) {
    const kind = (cmdline.match(/--type=([a-z-]+)/) || [null, 'browser'])[1];
    try {
      for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
        try {
          const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
          const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
          by.set(`${pid}/${tid}`, { label: `${kind}/${name}`, secs: statCpuSecs(stat) });
        } catch { /* the thread ended */ }
      }
    } catch { /* the process ended */ }
  }
  return by;
}

/** Where a reading's CPU time went (THREADS=1): the browser's threads sampled every 100 ms,
 *  so that a worker that ends before the reading does (a part's) still counts, up to its
 *  last 100 ms (the sampling itself takes a few % of a core, beside the browser). Returns a
 *  function that stops it and gives CPU seconds by label, largest first. */
function threadCpuWatch() {
  const first = threadCpuSecs();
  const last = new Map(first);
  const sample = () => { for (const [k, v] of threadCpuSecs()) last.set(k, v); };
  const timer = setInterval(sample, 100);
  return () => {
    clearInterval(timer);
    sample();
    const by = new Map();
    for (const [k, v] of last) by.set(v.label, (by.get(v.label) || 0) + v.secs - (first.get(k)?.secs || 0));
    return [...by].filter(([, t]) => t >= 0.02).sort((a, b) => b[1] - a[1]);
  };
}

/** A page that sees `cores` cores: the pool reads one file with that many workers. */
async function openPage(cores) {
  const context = await browser.newContext({ acceptDownloads: true });
  await context.addInitScript((n) => Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => n }), cores);
  // The page's own clock: when the file was picked (its input's change event), when the report
  // (or the error) was in the page, and when the frame that shows it was drawn (a task after
  // that frame's animation callbacks, style, layout and paint). Playwright's own round trips
  // (setInputFiles, polling for the report) are left out of the figures; the harness's total
  // is printed beside them.
  await context.addInitScript(() => {
    const now = () => performance.timeOrigin + performance.now();
    const bench = (window.__bench = {});
    document.addEventListener('change', (e) => { if (e.target.type === 'file') bench.picked ??= now(); }, true);
    new MutationObserver(() => {
      if (bench.picked && !bench.shown && document.querySelector('[data-testid=summary], [data-testid=error]')) {
        bench.shown = now();
        requestAnimationFrame(() => {
          const c = new MessageChannel();
          c.port1.onmessage = () => { bench.drawn = now(); };
          c.port2.postMessage(0);
        });
      }
    }).observe(document, { childList: true, subtree: true });
  });
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') console.error('console error:', m.text()); });
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.locator('[data-testid=drop-zone][data-ready=true]').waitFor();
  return { context, page };
}

/** One reading of `file` in a page of `cores` cores. */
async function measure(file, cores) {
  const { context, page } = await openPage(cores);
  inCache(file);
  if (PICK_AFTER_MS) await new Promise((ok) => setTimeout(ok, PICK_AFTER_MS));
  let peak = 0;
  const timer = setInterval(() => { peak = Math.max(peak, rendererRssMb()); }, 250);
  const cpu0 = browserCpuSecs();
  const threads = process.env.THREADS ? threadCpuWatch() : null;
  const t0 = performance.now();
  await page.getByTestId('file-input').setInputFiles(file);
  await page.locator('[data-testid=summary], [data-testid=error]').first().waitFor({ timeout: 3_600_000 });
  const harnessSecs = (performance.now() - t0) / 1000;
  await page.waitForFunction(() => window.__bench.drawn);
  const { picked, drawn } = await page.evaluate(() => window.__bench);
  const secs = (drawn - picked) / 1000;
  const cpu = browserCpuSecs() - cpu0;
  clearInterval(timer);
  if (threads) {
    const spent = threads();
    console.log(`  ${path.basename(file)}, ${cores} worker(s), CPU seconds by thread: ${spent.map(([n, t]) => `${n} ${t.toFixed(2)}`).join(', ')}`);
  }
  peak = Math.max(peak, rendererRssMb());
  // The report says how much JSON the worker parsed (after decompression).
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-json').click()]);
  const report = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
  const jsonBytes = report.traces?.[0]?.json_bytes || fs.statSync(file).size;
  const wasmMb = Number(await page.locator('.report').getAttribute('data-worker-wasm-bytes')) / 1e6;
  const parts = Number(await page.locator('.report').getAttribute('data-worker-parts'));
  const readHere = Number(await page.locator('.report').getAttribute('data-worker-slices-read-here'));
  // When the report reached the page: the rest of `secs` is drawing it.
  const readSecs = (Number(await page.locator('.report').getAttribute('data-worker-done-ms')) - picked) / 1000;
  await context.close();
  return { secs, harnessSecs, readSecs, cpu, peak, jsonBytes, wasmMb, parts, readHere };
}

/** Reads `file` through once, so that every measurement starts with it in the page cache
 *  (this VM's memory manager drops cached files between runs: a cold 500 MB read took 15 s). */
function inCache(file) {
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.allocUnsafe(16 << 20);
  while (fs.readSync(fd, buf, 0, buf.length, null) > 0);
  fs.closeSync(fd);
}

/** The CLI on one thread, same file, same run. */
function measureCli(file) {
  if (!fs.existsSync(CLI)) return null;
  inCache(file);
  const t0 = performance.now();
  execFileSync(CLI, ['--json', '--threads', '1', file], { stdio: ['ignore', 'ignore', 'ignore'] });
  return (performance.now() - t0) / 1000;
}

const idle = await openPage(1);
const idleMb = rendererRssMb();
await idle.context.close();
const best = (a, b) => (!a || b.secs < a.secs ? b : a);

console.log(`renderer RSS before any trace: ${idleMb.toFixed(0)} MB`);
console.log('file                                   workers  parts   file MB   JSON MB   seconds  (read+draw)  harness s   file MB/s   JSON MB/s   read MB/s   cores busy   peak renderer RSS   lead wasm memory');
for (const file of files) {
  const size = fs.statSync(file).size;
  let one = null, many = null, cli = null;
  for (let run = 0; run < RUNS; run++) {
    one = best(one, await measure(file, 1));
    many = best(many, await measure(file, WORKERS));
    const c = measureCli(file);
    if (c !== null) cli = cli === null ? c : Math.min(cli, c);
  }
  for (const [workers, m] of [[1, one], [WORKERS, many]]) {
    console.log(`${path.basename(file).padEnd(38)} ${String(workers).padStart(7)} ${String(m.parts).padStart(6)} ${(size / 1e6).toFixed(0).padStart(9)} ${(m.jsonBytes / 1e6).toFixed(0).padStart(9)} ${m.secs.toFixed(2).padStart(9)} ${`(${m.readSecs.toFixed(2)}+${(m.secs - m.readSecs).toFixed(2)})`.padStart(12)} ${m.harnessSecs.toFixed(2).padStart(10)} ${(size / 1e6 / m.secs).toFixed(0).padStart(11)} ${(m.jsonBytes / 1e6 / m.secs).toFixed(0).padStart(11)} ${(m.jsonBytes / 1e6 / m.readSecs).toFixed(0).padStart(11)} ${(m.cpu / m.harnessSecs).toFixed(2).padStart(12)} ${m.peak.toFixed(0).padStart(12)} MB ${m.wasmMb.toFixed(0).padStart(15)} MB`);
  }
  console.log(`  ${WORKERS} workers against 1: ${(one.secs / many.secs).toFixed(2)}x; slices the lead worker read itself, not its reader: ${one.readHere} / ${many.readHere}`);
  if (cli !== null) {
    console.log(`  CLI --threads 1: ${cli.toFixed(2)} s, ${(one.jsonBytes / 1e6 / cli).toFixed(0)} JSON MB/s; browser/CLI: 1 worker ${(cli / one.secs * 100).toFixed(0)}%, ${WORKERS} workers ${(cli / many.secs * 100).toFixed(0)}% (by the harness's clock: ${(cli / one.harnessSecs * 100).toFixed(0)}%, ${(cli / many.harnessSecs * 100).toFixed(0)}%)`);
  }
}
await browser.close();
server.close();
