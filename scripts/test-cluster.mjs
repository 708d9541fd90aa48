// D7: `npm run test:cluster` — the three-node Restate cluster spec (spec/restate/cluster), alone, with its own jest
// configuration; not part of `npm test`. It says up front how long it usually takes and at the end how long it took.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const jest = join(dirname(createRequire(import.meta.url).resolve('jest/package.json')), 'bin', 'jest.js');
console.log('D7: three restate-server nodes, an endpoint, 20 conversations, one node killed; usually about a minute (59–71 s on 2 cores shared with other jobs)');
const started = Date.now();
const run = spawnSync(process.execPath, [jest, '-c', 'jest.cluster.config.js', ...process.argv.slice(2)], { stdio: 'inherit' });
console.log(`D7: took ${((Date.now() - started) / 1000).toFixed(0)} s`);
process.exitCode = run.status ?? 1;
