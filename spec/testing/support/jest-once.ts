/**
 * Runs generated spec files as a user runs them: written to disk in a consumer-like folder (no node_modules
 * above it), and run by one jest child process, with a config that maps `rx-tool-loop` and its subpaths to
 * the sources as the repository's jest.config.js does. One child for all the files keeps it affordable.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { consumerDir } from '../../support/consumer-dir';

const root = join(__dirname, '..', '..', '..');

/** The outcome of one file: passed, or jest's failure messages. */
export interface FileOutcome {
  name: string;
  passed: boolean;
  failure: string;
}

/** Writes `files` (name → source) to a fresh folder, runs jest once over them, and removes the folder. */
export function runWithJest(files: ReadonlyMap<string, string>): FileOutcome[] {
  const folder = consumerDir('rx-tool-loop-recorded-');
  try {
    const entry = (path: string) => join(root, path);
    const config = {
      rootDir: folder,
      testEnvironment: require.resolve('jest-environment-node', { paths: [root] }),
      testMatch: ['<rootDir>/*.spec.ts'],
      transform: { '^.+\\.ts$': [require.resolve('ts-jest', { paths: [root] }), { tsconfig: join(folder, 'tsconfig.json') }] },
      moduleNameMapper: {
        '^(\\.{1,2}/.*)\\.js$': '$1',
        '^rx-tool-loop$': entry('src/index.ts'),
        '^rx-tool-loop/testing$': entry('src/testing/index.ts'),
      },
      // rxjs as the sources see it: one copy for the test and the library
      modulePaths: [join(root, 'node_modules')],
      cacheDirectory: join(folder, '.jest-cache'),
    };
    writeFileSync(join(folder, 'jest.config.json'), JSON.stringify(config));
    // ts-jest transpiles each file alone (isolatedModules), as the README's consumer set-up has it
    const compilerOptions = { target: 'ES2023', module: 'commonjs', moduleResolution: 'node10', strict: true, esModuleInterop: true, skipLibCheck: true, isolatedModules: true, ignoreDeprecations: '6.0', types: [] };
    writeFileSync(join(folder, 'tsconfig.json'), JSON.stringify({ compilerOptions }));
    for (const [name, source] of files) writeFileSync(join(folder, name), source);
    const results = join(folder, 'results.json');
    try {
      execFileSync(process.execPath, [join(root, 'node_modules/jest/bin/jest.js'), '--config', join(folder, 'jest.config.json'), '--ci', '--runInBand', '--json', '--outputFile', results], {
        cwd: folder,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 240_000,
      });
    } catch (error) {
      // jest exits non-zero when a test fails: the results file says which; without it, jest itself failed
      const { stdout, stderr, message } = error as { stdout?: string; stderr?: string; message: string };
      try {
        readFileSync(results, 'utf8');
      } catch {
        throw new Error(`jest did not run the generated files:\n${stdout ?? ''}${stderr ?? message}`);
      }
    }
    const report = JSON.parse(readFileSync(results, 'utf8')) as { testResults: { name: string; status: string; message: string }[] };
    return [...files.keys()].map((name) => {
      const result = report.testResults.find((r) => r.name.endsWith(`/${name}`));
      return { name, passed: result?.status === 'passed', failure: result === undefined ? 'jest did not run it' : result.message };
    });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
