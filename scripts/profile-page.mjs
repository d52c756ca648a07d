// Where the page's analysis worker spends its time: reads FILE in headless Chromium with V8's
// sampling profiler on every worker (CDP `Profiler`), then prints the self time by function
// (the wasm's own names: the worker's wasm keeps its name section) and writes the profiles as
// .cpuprofile files (open them in Chromium's DevTools, Performance panel). Not a test.
//   node scripts/profile-page.mjs FILE [OUT_DIR]
// Needs the site in dist/ (scripts/build-web.sh) and tests/browser's node_modules (npm ci
// there). CHROMIUM: the browser (default /usr/bin/chromium); DIST: the site (default dist/);
// TOP: functions printed (default 40); INTERVAL_US: the sampling interval (default 200);
// MAIN=1: the page's main thread too (from the file's pick to the report's first frame).
import fs from 'node:fs';
import path from 'node:path';
import { DIST, serve, launch, oneCore, ready } from './page-harness.mjs';

const [file, outDir = '.'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/profile-page.mjs FILE [OUT_DIR]');
  process.exit(2);
}
const TOP = Number(process.env.TOP || 40);
const site = await serve(DIST);
const browser = await launch('chromium');
const page = await browser.newPage();
// One core, as bench-page.mjs: one analysis worker.
await oneCore(page);
const sessions = [];
page.on('workercreated', async (w) => {
  const s = { url: w.url(), client: w.client };
  sessions.push(s);
  await s.client.send('Profiler.enable');
  await s.client.send('Profiler.setSamplingInterval', { interval: Number(process.env.INTERVAL_US || 200) });
  await s.client.send('Profiler.start');
});
await ready(page, site);
// The page's own thread too (the progress it draws while the workers read, then the report's
// views), after the page is ready: its start-up is not the reading's.
if (process.env.MAIN === '1') {
  const client = await page.createCDPSession();
  await client.send('Profiler.enable');
  await client.send('Profiler.setSamplingInterval', { interval: Number(process.env.INTERVAL_US || 200) });
  await client.send('Profiler.start');
  sessions.push({ url: 'page', client });
}
const input = await page.$('[data-testid=file-input]');
const t0 = Date.now();
await input.uploadFile(path.resolve(file));
await page.waitForSelector('[data-testid=summary], [data-testid=error]', { timeout: 3_600_000 });
// The frame that shows it.
await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
console.log(`${path.basename(file)}: report after ${((Date.now() - t0) / 1000).toFixed(2)} s`);

for (const [k, s] of sessions.entries()) {
  const { profile } = await s.client.send('Profiler.stop');
  const out = path.join(outDir, `worker-${k}.cpuprofile`);
  fs.writeFileSync(out, JSON.stringify(profile));
  // Self time per function: each sample's node, weighted by the time to the next sample.
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const f = byId.get(id).callFrame;
    const name = f.functionName || `(${f.url ? path.basename(f.url) : 'anonymous'})`;
    self.set(name, (self.get(name) || 0) + dt);
    total += dt;
  });
  const busy = total - (self.get('(idle)') || 0) - (self.get('(program)') || 0);
  console.log(`${s.url === 'page' ? 'page' : 'worker'} ${k} (${path.basename(s.url)}): ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy; ${out}`);
  for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    console.log(`  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1e3).toFixed(0).padStart(6)} ms  ${name.slice(0, 140)}`);
  }
}
await browser.close();
site.close();
