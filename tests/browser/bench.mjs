// Worker throughput in headless Chromium: opens each file through the page's file input,
// times input -> report, and samples the renderer processes' memory (the worker runs in
// the page's renderer) to show that memory stays bounded. Not a test: prints a table.
// usage: node bench.mjs FILE... (DIST, CHROMIUM as for the e2e tests)
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

const page = await browser.newPage();
page.on('console', (m) => { if (m.type() === 'error') console.error('console error:', m.text()); });
await page.goto(`http://127.0.0.1:${server.address().port}/`);
await page.locator('[data-testid=drop-zone][data-ready=true]').waitFor();
const idleMb = rendererRssMb();

console.log(`renderer RSS before any trace: ${idleMb.toFixed(0)} MB`);
console.log('file                                   file MB   JSON MB   seconds   file MB/s   JSON MB/s   peak renderer RSS   worker wasm memory');
for (const file of files) {
  for (let run = 0; run < RUNS; run++) {
    const size = fs.statSync(file).size;
    let peak = 0;
    const timer = setInterval(() => { peak = Math.max(peak, rendererRssMb()); }, 250);
    const t0 = performance.now();
    await page.getByTestId('file-input').setInputFiles(file);
    await page.locator('[data-testid=summary], [data-testid=error]').first().waitFor({ timeout: 3_600_000 });
    const secs = (performance.now() - t0) / 1000;
    clearInterval(timer);
    peak = Math.max(peak, rendererRssMb());
    // The report says how much JSON the worker parsed (after decompression).
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-json').click()]);
    const report = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
    const jsonBytes = report.traces?.[0]?.json_bytes || size;
    const wasmMb = Number(await page.locator('.report').getAttribute('data-worker-wasm-bytes')) / 1e6;
    console.log(`${path.basename(file).padEnd(38)} ${(size / 1e6).toFixed(0).padStart(8)} ${(jsonBytes / 1e6).toFixed(0).padStart(9)} ${secs.toFixed(2).padStart(9)} ${(size / 1e6 / secs).toFixed(0).padStart(11)} ${(jsonBytes / 1e6 / secs).toFixed(0).padStart(11)} ${peak.toFixed(0).padStart(12)} MB ${wasmMb.toFixed(0).padStart(15)} MB`);
    await page.locator('.brand').click();
    await page.locator('[data-testid=drop-zone][data-ready=true]').waitFor();
  }
}
await browser.close();
server.close();
