// A static server for the built site (dist/) on a free loopback port, under a sub-path as on
// GitHub Pages, that logs every request it answers (the Firefox tests and scripts/bench-page.mjs).
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css',
  '.svg': 'image/svg+xml', '.json': 'application/json', '.gz': 'application/gzip' };

/** Serves `dist` under `base`; resolves to {origin, url, requests, close}: `requests` lists
 *  every path asked for, in order. */
export async function serve(dist, base = '/sub/tracesight/') {
  const requests = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    requests.push(url.pathname);
    if (!url.pathname.startsWith(base)) { res.writeHead(404).end(); return; }
    const file = path.join(dist, decodeURIComponent(url.pathname.slice(base.length)) || 'index.html');
    if (!file.startsWith(dist) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return { origin, url: origin + base, requests, close: () => server.close() };
}
