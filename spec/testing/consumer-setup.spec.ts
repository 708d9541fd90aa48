/**
 * T10: the set-up for a newcomer in docs/testing.md (the guide the README points to), tried as one: the packed
 * package installed into a fresh folder, the guide's own `tsconfig.json`, `jest.config.js` and example spec
 * written there as they stand in the guide, the spec type-checked by TypeScript 6 against the installed .d.ts and run by jest with ts-jest.
 * jest, ts-jest, TypeScript and the jest types are the project's own (linked, not installed again). Needs
 * `npm run build` first (`npm test` does it).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { consumerDir } from '../support/consumer-dir';

jest.setTimeout(180_000);

const root = join(__dirname, '..', '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const GUIDE = 'docs/testing.md';
const guide = readFileSync(join(root, GUIDE), 'utf8');
let project = '';

/** The code block right after the guide's `<!-- NAME -->` marker. */
function block(name: string): string {
  const found = new RegExp(`<!-- ${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\``).exec(guide);
  if (found === null) throw new Error(`${GUIDE} has no block marked <!-- ${name} -->`);
  return `${found[1]}\n`;
}

beforeAll(() => {
  if (!existsSync(join(root, 'dist/cjs/testing/index.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  project = consumerDir('rx-tool-loop-newcomer-');
  const rxjs = (JSON.parse(readFileSync(join(root, 'node_modules/rxjs/package.json'), 'utf8')) as { version: string }).version;
  const [packed] = JSON.parse(execFileSync(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', project], { cwd: root, encoding: 'utf8' })) as { filename: string }[];
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'newcomer', version: '1.0.0', private: true }));
  execFileSync(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', join(project, packed!.filename), `rxjs@${rxjs}`], { cwd: project, stdio: 'pipe' });
  // the dev tools as `npm i -D jest ts-jest @types/jest typescript@~6.0.3` would bring them: the project's own
  mkdirSync(join(project, 'node_modules', '@types'), { recursive: true });
  for (const name of ['jest', 'ts-jest', 'typescript', '@types/jest']) symlinkSync(join(root, 'node_modules', name), join(project, 'node_modules', name), 'dir');
  mkdirSync(join(project, 'spec'));
  writeFileSync(join(project, 'tsconfig.json'), block('consumer tsconfig.json'));
  writeFileSync(join(project, 'jest.config.js'), block('consumer jest.config.js'));
  writeFileSync(join(project, 'spec', 'agent.spec.ts'), block('consumer spec'));
});

afterAll(() => {
  if (project !== '') rmSync(project, { recursive: true, force: true });
});

describe("the set-up of docs/testing.md, from the packed package in a fresh folder (T10)", () => {
  it('T10: the guide\'s example spec type-checks with TypeScript 6 and the guide\'s tsconfig.json (strict, against the installed .d.ts)', () => {
    const tsc = join(project, 'node_modules', 'typescript', 'bin', 'tsc');
    expect((JSON.parse(readFileSync(join(project, 'node_modules', 'typescript', 'package.json'), 'utf8')) as { version: string }).version).toMatch(/^6\.0\./);
    try {
      execFileSync(process.execPath, [tsc, '--noEmit', '-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8', stdio: 'pipe' });
    } catch (error) {
      throw new Error(`tsc failed:\n${(error as { stdout?: string }).stdout ?? String(error)}`);
    }
  });

  it('T10: jest with the guide\'s jest.config.js (ts-jest) runs the guide\'s example spec: its 3 tests pass, without a ts-jest warning', () => {
    const run = spawnSync(process.execPath, [join(project, 'node_modules', 'jest', 'bin', 'jest.js'), '--ci'], { cwd: project, encoding: 'utf8' });
    const output = `${run.stdout}${run.stderr}`;
    expect({ status: run.status, output }).toEqual({ status: 0, output: expect.stringContaining('Tests:       3 passed, 3 total') });
    expect(output).not.toMatch(/ts-jest\[[^\]]*\] \(WARN\)/);
  });
});
