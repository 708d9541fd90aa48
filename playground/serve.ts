/**
 * `npm run playground [-- --port N]` (V1): builds the page and serves it on 127.0.0.1 (a free port unless
 * one is given), prints its URL, and stops on Ctrl+C. The npm script runs `npm run build` first.
 */
import { buildPlayground } from './build.js';
import { serveFolder } from './server.js';

async function main(): Promise<void> {
  const at = process.argv.indexOf('--port');
  const port = at === -1 ? 0 : Number(process.argv[at + 1]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be a port number (got ${process.argv[at + 1]})`);
  const folder = await buildPlayground();
  const served = await serveFolder(folder, port);
  console.log(`playground: ${served.url}  (Ctrl+C stops it)`);
  const stop = () => void served.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
