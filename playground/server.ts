/** Serves a folder on 127.0.0.1 only (V1): GET and HEAD of its files, nothing outside it. */
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

export interface Served {
  url: string;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 at `port` (0: a free one) and resolves with the page's URL. */
export function serveFolder(folder: string, port = 0): Promise<Served> {
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://127.0.0.1').pathname);
    const file = normalize(join(folder, path.endsWith('/') ? `${path}index.html` : path));
    const inside = file.startsWith(folder + sep);
    const found = inside && (request.method === 'GET' || request.method === 'HEAD') && isFile(file);
    if (!found) {
      response.writeHead(inside ? 404 : 403, { 'content-type': 'text/plain; charset=utf-8' }).end(inside ? 'not found' : 'forbidden');
      return;
    }
    response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    if (request.method === 'HEAD') response.end();
    else createReadStream(file).pipe(response);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${bound}/`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
