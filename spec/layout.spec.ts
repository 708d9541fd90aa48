/** The layout shows the architecture: src/ in folders that name the parts, spec/ mirrors it, no import cycle. */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(__dirname, '..');

function files(folder: string, suffix: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? files(path, suffix) : name.endsWith(suffix) ? [path] : [];
  });
}

function imports(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(/^(?:import|export)[^'"]*from\s*'(\.[^']+)'/gm)].map((m) => resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')));
}

describe('layout', () => {
  const sources = files(join(root, 'src'), '.ts');

  it('src/ has no import cycle (type-only imports included)', () => {
    const graph = new Map(sources.map((file) => [file, imports(file)]));
    const state = new Map<string, 'visiting' | 'done'>();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(root, f)).join(' -> '));
        return;
      }
      state.set(file, 'visiting');
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of sources) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it('R31: no import loop between folders of src/ (a file at the top, such as types.ts, is a folder of its own)', () => {
    // a folder is a part: src/loop, src/tools, src/providers/http …; types.ts and index.ts are parts of their own
    const part = (file: string) => {
      const path = relative(join(root, 'src'), file);
      return path.includes('/') ? dirname(path) : path;
    };
    const graph = new Map<string, Set<string>>();
    for (const file of sources) {
      const from = part(file);
      for (const target of imports(file)) {
        const to = part(target);
        if (to !== from) (graph.get(from) ?? graph.set(from, new Set()).get(from)!).add(to);
      }
    }
    const state = new Map<string, 'visiting' | 'done'>();
    const loops: string[] = [];
    const visit = (folder: string, path: string[]) => {
      if (state.get(folder) === 'done') return;
      if (state.get(folder) === 'visiting') {
        loops.push([...path.slice(path.indexOf(folder)), folder].join(' -> '));
        return;
      }
      state.set(folder, 'visiting');
      for (const next of graph.get(folder) ?? []) visit(next, [...path, folder]);
      state.set(folder, 'done');
    };
    for (const folder of graph.keys()) visit(folder, []);
    expect(loops).toEqual([]);
  });

  it('every relative import of src/ resolves to a file', () => {
    const missing = sources.flatMap((file) => imports(file).filter((target) => !sources.includes(target)).map((t) => `${relative(root, file)} -> ${relative(root, t)}`));
    expect(missing).toEqual([]);
  });

  it('src/ is in folders that name the parts; only the entry and the shared types sit at the top', () => {
    const top = readdirSync(join(root, 'src')).sort();
    expect(top).toEqual(['acp', 'ai-sdk', 'conversation', 'hooks', 'index.ts', 'limits', 'loop', 'mcp', 'otel', 'providers', 'restate', 'sessions', 'testing', 'tools', 'types.ts', 'ui', 'util']);
  });

  it('spec/ mirrors src/: a spec of a module sits in the same folder as the module', () => {
    const misplaced = files(join(root, 'spec'), '.spec.ts')
      .map((spec) => relative(join(root, 'spec'), spec).replace(/\.spec\.ts$/, '.ts'))
      .filter((path) => {
        const name = path.split('/').pop()!;
        // misplaced: a module of that name exists, but none at the spec's own path (two modules may share a name)
        const named = sources.filter((file) => file.endsWith(`/${name}`));
        return named.length > 0 && !named.some((module) => relative(join(root, 'src'), module) === path);
      });
    expect(misplaced).toEqual([]);
  });
});
