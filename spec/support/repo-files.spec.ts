import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { repoFiles } from './repo-files.js';

const root = resolve(__dirname, '../..');

describe('repoFiles: the specs that read the repository need no git (a downloaded archive passes npm test)', () => {
  let copy: string;
  beforeEach(() => {
    copy = mkdtempSync(join(tmpdir(), 'rx-tool-loop-copy-'));
  });
  afterEach(() => rmSync(copy, { recursive: true, force: true }));

  const put = (file: string, text = 'x') => {
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    writeFileSync(join(copy, file), text);
  };

  it('in a folder that is no git checkout, walks the tree and leaves out what the repository ignores', () => {
    for (const file of ['CONTRACT.md', 'src/index.ts', 'spec/a.spec.ts', 'bench/run.js', '.github/ci.yml']) put(file);
    for (const file of ['node_modules/rxjs/index.js', 'dist/cjs/index.js', 'bench/node_modules/x/y.js', 'bench/profiles/p.txt', 'coverage/lcov.info']) put(file);
    for (const file of ['tsconfig.tsbuildinfo', 'bench/w1.cpuprofile', 'w1.heapprofile', 'playground/screenshot.png']) put(file);
    expect(repoFiles(copy)).toEqual(['.github/ci.yml', 'CONTRACT.md', 'bench/run.js', 'spec/a.spec.ts', 'src/index.ts']);
  });

  it('leaves out the temporary folder when a runner set it inside the checkout (jest keeps its cache there)', () => {
    for (const file of ['src/index.ts', '.tmp/jest_0/haste-map-1', '.tmp/rx-tool-loop-consumer-1/package.json']) put(file);
    expect(repoFiles(copy, join(copy, '.tmp'))).toEqual(['src/index.ts']);
    expect(repoFiles(copy, tmpdir())).toEqual(['.tmp/jest_0/haste-map-1', '.tmp/rx-tool-loop-consumer-1/package.json', 'src/index.ts']);
  });

  it('a copy of this repository without .git lists exactly the files git lists here', () => {
    const files = repoFiles(root);
    expect(files).toContain('CONTRACT.md');
    for (const file of files) {
      mkdirSync(dirname(join(copy, file)), { recursive: true });
      copyFileSync(join(root, file), join(copy, file));
    }
    put('node_modules/rxjs/package.json', '{}'); // as after npm ci
    put('dist/cjs/index.js');
    expect(repoFiles(copy)).toEqual(files);
  });
});
