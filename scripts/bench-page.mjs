// The page's reading speed in Chromium and in Firefox side by side, beside the CLI on one
// thread, in one run (not a test: prints a table). Both browsers are driven by puppeteer-core
// (Chromium over CDP, Firefox over WebDriver BiDi), each page seeing one core (one analysis
// worker, with its reader worker), and read each file RUNS times, alternating browser by
// browser, then the CLI: the best of the runs is kept, and the ratios come from this run.
// Times are by the page's clock: from the file input's change event to the report reaching
// the page (`read`), and to the frame that shows it (`shown`); and, as a loaded machine's clock
// says little, the CPU seconds of the analysis worker's thread and of the whole browser (from
// /proc, Linux) beside the CLI's.
//   node scripts/bench-page.mjs FILE...
// Needs the site in dist/ (scripts/build-web.sh) and tests/browser's node_modules (npm ci
// there). CHROMIUM, FIREFOX: the browsers (default /usr/bin/chromium, /usr/bin/firefox-esr;
// BROWSERS=chromium,firefox picks); TRACESIGHT_BIN: the CLI (default target/release/tracesight);
// DIST: the site (default dist/); FIREFOX_PREFS: a JSON object of Firefox prefs (e.g. {"javascript.options.wasm_baselinejit":false}); CHROMIUM_ARGS: more Chromium flags, space-separated (e.g. --js-flags=--no-liftoff);
// RUNS (default 3); CORES: how many cores the page sees (default 1: one analysis worker; more
// read a large file in parts); PICK_AFTER_MS: how long after the page is ready the file is picked (a
// user takes a while; meanwhile the browser may finish optimising the worker's wasm); THREADS=1: print each reading's CPU seconds by browser thread.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { ROOT, DIST, EXE, serve, launch, seeCores, ready } from './page-harness.mjs';

const CLI = process.env.TRACESIGHT_BIN || path.join(ROOT, 'target/release/tracesight');
const RUNS = Number(process.env.RUNS || 3);
const CORES = Number(process.env.CORES || 1);
const PICK_AFTER_MS = Number(process.env.PICK_AFTER_MS || 0);
const BROWSERS = (process.env.BROWSERS || 'chromium,firefox').split(',').filter((b) => fs.existsSync(EXE[b]));
const files = process.argv.slice(2);
if (!files.length) { console.error('usage: node scripts/bench-page.mjs FILE...'); process.exit(2); }

const site = await serve(DIST);

/** The page in a fresh context, seeing CORES cores, with the page's clock on the reading. */
async function openPage(browser) {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await seeCores(page, CORES, () => {
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
  page.on('console', (m) => { if (m.type() === 'error') console.error(`  console error: ${m.text()}`); });
  await ready(page, site);
  return { context, page };
}

/** Reads `file` through once, so that each measurement starts with it in the page cache. */
function inCache(file) {
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.allocUnsafe(16 << 20);
  while (fs.readSync(fd, buf, 0, buf.length, null) > 0);
  fs.closeSync(fd);
}

/** CPU seconds so far of each thread of the processes whose command line names `exe`. */
function threadCpu(exe) {
  const by = new Map();
  for (const pid of fs.readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes(exe)) continue;
      const kind = (cmd.match(/(?:--type=|-contentproc.* )([a-z-]+)$/) || cmd.match(/--type=([a-z-]+)/) || [null, 'main'])[1];
      for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
        const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        by.set(`${pid}/${tid}`, { label: `${kind}/${name}`, secs: (Number(f[11]) + Number(f[12])) / 100 });
      }
    } catch { /* ended */ }
  }
  return by;
}

function cpuWatch(exe) {
  const first = threadCpu(exe);
  const last = new Map(first);
  const timer = setInterval(() => { for (const [k, v] of threadCpu(exe)) last.set(k, v); }, 100);
  return () => {
    clearInterval(timer);
    for (const [k, v] of threadCpu(exe)) last.set(k, v);
    const by = new Map();
    // Workers' threads one by one (the analysis worker and its reader), the others by name.
    const worker = (label) => /DedicatedWorker|DOM Worker/.test(label);
    for (const [k, v] of last) {
      const label = worker(v.label) ? `${v.label}#${k.split('/')[1]}` : v.label;
      by.set(label, (by.get(label) || 0) + v.secs - (first.get(k)?.secs || 0));
    }
    return [...by].filter(([, t]) => t >= 0.05).sort((a, b) => b[1] - a[1]);
  };
}

/** One reading of `file`: seconds to the report reaching the page, and to it drawn. */
async function measure(browser, name, file) {
  const { context, page } = await openPage(browser);
  inCache(file);
  if (PICK_AFTER_MS) await new Promise((ok) => setTimeout(ok, PICK_AFTER_MS));
  const watch = cpuWatch(path.basename(EXE[name]));
  const input = await page.$('[data-testid=file-input]');
  await input.uploadFile(path.resolve(file));
  await page.waitForSelector('[data-testid=summary], [data-testid=error]', { timeout: 3_600_000 });
  // Polled with evaluate: waitForFunction builds a Function in the page, which the page's CSP
  // blocks in Firefox.
  for (const t0 = Date.now(); !(await page.evaluate(() => window.__bench.drawn)); ) {
    if (Date.now() - t0 > 60_000) throw new Error(`${name}: the report was not drawn within 60 s`);
    await new Promise((ok) => setTimeout(ok, 20));
  }
  const { picked, drawn } = await page.evaluate(() => window.__bench);
  const doneMs = Number(await page.$eval('.report', (e) => e.dataset.workerDoneMs).catch(() => NaN));
  // The analysis worker's wasm memory when it finished (a wasm memory never shrinks: its peak).
  const wasmBytes = Number(await page.$eval('.report', (e) => e.dataset.workerWasmBytes).catch(() => NaN));
  const spent = watch();
  await context.close();
  if (process.env.THREADS) console.log(`  ${name}: CPU s by thread: ${spent.map(([n, t]) => `${n} ${t.toFixed(2)}`).join(', ')}`);
  // CPU seconds of the busiest worker thread (the analysis worker) and of the whole browser:
  // on a loaded machine these say more than the clock does.
  const workerCpu = Math.max(0, ...spent.filter(([n]) => /DedicatedWorker|DOM Worker/.test(n)).map(([, t]) => t));
  const cpu = spent.reduce((sum, [, t]) => sum + t, 0);
  return { read: (doneMs - picked) / 1000, shown: (drawn - picked) / 1000, workerCpu, cpu, wasmMb: wasmBytes / 2 ** 20 };
}

/** The CLI on one thread: wall seconds and CPU seconds (user + system, bash's `time`). */
function cli(file) {
  if (!fs.existsSync(CLI)) return null;
  inCache(file);
  const t0 = performance.now();
  const out = execFileSync('bash', ['-c', 'TIMEFORMAT="%U %S"; { time "$0" --json --threads 1 "$1" >/dev/null 2>/dev/null; } 2>&1', CLI, file], { encoding: 'utf8' });
  const [user, system] = out.trim().split(/\s+/).map(Number);
  return { wall: (performance.now() - t0) / 1000, cpu: user + system };
}

const browsers = {};
for (const name of BROWSERS) {
  browsers[name] = await launch(name);
  console.log(`${name}: ${await browsers[name].version()}`);
}
const mb = (file) => fs.statSync(file).size / 1e6;
const fmt = (secs, file) => `${secs.toFixed(2)} s ${(mb(file) / secs).toFixed(0).padStart(4)} MB/s`;
for (const file of files) {
  const best = {};
  let cliBest = null;
  for (let run = 0; run < RUNS; run++) {
    for (const name of BROWSERS) {
      const m = await measure(browsers[name], name, file);
      console.log(`  run ${run + 1} ${name.padEnd(8)} read ${fmt(m.read, file)}, shown ${fmt(m.shown, file)}; CPU s: analysis worker ${m.workerCpu.toFixed(2)}, browser ${m.cpu.toFixed(2)}; worker wasm memory ${m.wasmMb.toFixed(0)} MiB`);
      if (!best[name] || m.read < best[name].read) best[name] = m;
    }
    const c = cli(file);
    if (c !== null) {
      console.log(`  run ${run + 1} CLI      --threads 1 ${fmt(c.wall, file)}; CPU s ${c.cpu.toFixed(2)}`);
      if (!cliBest || c.wall < cliBest.wall) cliBest = c;
    }
  }
  console.log(`${path.basename(file)} (${mb(file).toFixed(0)} MB), best of ${RUNS} (by the clock):`);
  for (const name of BROWSERS) {
    const m = best[name];
    const vsCli = cliBest ? `; ${(cliBest.wall / m.read).toFixed(2)}x the CLI by the clock, ${(cliBest.cpu / m.workerCpu).toFixed(2)}x by CPU (CLI / analysis worker)` : '';
    console.log(`  ${name.padEnd(8)} read ${fmt(m.read, file)}, shown ${fmt(m.shown, file)}; CPU s: analysis worker ${m.workerCpu.toFixed(2)}, browser ${m.cpu.toFixed(2)}; worker wasm memory ${m.wasmMb.toFixed(0)} MiB${vsCli}`);
  }
  if (cliBest) console.log(`  CLI      --threads 1 ${fmt(cliBest.wall, file)}; CPU s ${cliBest.cpu.toFixed(2)}`);
  if (best.chromium && best.firefox) {
    const [c, f] = [best.chromium, best.firefox];
    console.log(`  Firefox / Chromium: ${(c.read / f.read).toFixed(2)}x (read), ${(c.shown / f.shown).toFixed(2)}x (shown), ${(c.workerCpu / f.workerCpu).toFixed(2)}x (analysis worker CPU), ${(c.cpu / f.cpu).toFixed(2)}x (browser CPU)`);
  }
}
for (const b of Object.values(browsers)) await b.close();
site.close();
