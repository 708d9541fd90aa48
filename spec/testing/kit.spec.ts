/** The kit as a whole: framework-agnostic, and made for virtual time. */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const folder = join(__dirname, '..', '..', 'src', 'testing');
const sources = readdirSync(folder).map((name) => ({ name, text: readFileSync(join(folder, name), 'utf8') }));

describe('rx-tool-loop/testing', () => {
  it('T4: no double uses a Promise (a Promise does not advance under TestScheduler)', () => {
    // comments and messages may say why (T8 names a Promise tool still running): only code counts
    const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '').replace(/'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g, "''");
    expect(sources.filter(({ text }) => /\bPromise\b|\.then\(|\basync\b|\bawait\b/.test(code(text))).map(({ name }) => name)).toEqual([]);
  });

  it('imports only rxjs, rxjs/testing and the library: neither jest nor vitest', () => {
    const foreign = sources.flatMap(({ name, text }) =>
      [...text.matchAll(/^import[^'"]*'([^']+)'/gm)].map((m) => m[1]!).filter((from) => !/^(rxjs|rxjs\/testing|\.{1,2}\/.*)$/.test(from)).map((from) => `${name}: ${from}`),
    );
    expect(foreign).toEqual([]);
  });

  it('T6: the marble scenarios use only rx-tool-loop/testing and the public API (the package\'s entries); their support is jest glue', () => {
    const entries = Object.keys((JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { exports: Record<string, unknown> }).exports)
      .filter((entry) => entry !== './package.json')
      .map((entry) => `rx-tool-loop${entry.slice(1)}`);
    const marbles = join(__dirname, '..', '..', 'marbles');
    const files = [
      ...readdirSync(marbles).filter((name) => name.endsWith('.ts')).map((name) => join(marbles, name)),
      join(marbles, 'support', 'scenario.ts'),
    ];
    const foreign = files.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/^import[^'"]*'([^']+)'/gm)]
        .map((m) => m[1]!)
        .filter((from) => !entries.includes(from) && !/^(rxjs|rxjs\/testing|\.\/support\/scenario\.js)$/.test(from))
        .map((from) => `${file}: ${from}`),
    );
    expect(foreign).toEqual([]);
  });
});
