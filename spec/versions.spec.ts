/**
 * Version 4, "Versions and changes" and "Docs that said otherwise": the package's version has its entry in
 * CHANGELOG.md (Keep a Changelog), each breaking change there comes with its migration, and the docs' word on
 * `PROPERTY_RUNS` is what the property suites do.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

describe('Versions and changes (version 4)', () => {
  const changelog = read('CHANGELOG.md');
  const { version } = JSON.parse(read('package.json')) as { version: string };

  it('Versions and changes: package.json\'s version has its section in CHANGELOG.md, under an Unreleased one, and the changelog ships', () => {
    const headings = [...changelog.matchAll(/^## \[([^\]]+)\]/gm)].map((match) => match[1]);
    expect(headings[0]).toBe('Unreleased');
    expect(headings).toContain(version);
    expect(version).toBe('0.3.0'); // version 3 as it stands; 0.4.0 when version 4 is done
    expect((JSON.parse(read('package.json')) as { files: string[] }).files).toContain('CHANGELOG.md');
  });

  it('Versions and changes: every breaking entry says how to migrate', () => {
    const breaking = changelog.split(/\n(?=- )/).filter((entry) => /\*\*Breaking\b/.test(entry));
    expect(breaking.length).toBeGreaterThan(0);
    for (const entry of breaking) expect(entry).toMatch(/[Mm]igrat/);
  });

  it('Versions and changes: describeEvent\'s changed lines of version 3 are named, with how to migrate a recorded test', () => {
    const v3 = changelog.slice(changelog.indexOf('## [0.3.0]'));
    for (const line of ['tool_call NAME INPUT', 'tool_start NAME INPUT', 'Migrating a recorded test']) expect(v3).toContain(line);
  });
});

describe('Docs that said otherwise (version 4)', () => {
  it('Docs that said otherwise: every generated-scenario suite of spec/properties and spec/conversation reads PROPERTY_RUNS (the soak, SOAK_LOOPS), as docs/how-it-works.md says', () => {
    const suites = ['spec/properties', 'spec/conversation'].flatMap((folder) =>
      readdirSync(join(root, folder))
        .filter((name) => name.endsWith('.spec.ts'))
        .map((name) => `${folder}/${name}`),
    );
    const generated = suites.filter((file) => read(file).includes('numRuns'));
    expect(generated.length).toBeGreaterThan(5);
    for (const file of generated) expect([file, read(file).includes(file.endsWith('soak.spec.ts') ? 'SOAK_LOOPS' : 'PROPERTY_RUNS')]).toEqual([file, true]);
    expect(read('docs/how-it-works.md')).toContain('`PROPERTY_RUNS=N` sets');
  });
});
