/**
 * Builds the playground page (V1): playground/src bundled by esbuild with the library's ESM build
 * (dist/esm, made by `npm run build`) into playground/dist, beside index.html and style.css.
 *
 * The marble scenarios of marbles/ are bundled as they are. Three aliases hold for them alone:
 * `./support/scenario.js` (the jest glue) becomes a per-file module whose `scenario(name, body)` only
 * registers the body, and `rx-tool-loop` / `rx-tool-loop/testing` become thin shims over the build that
 * tell the page which lines are the provider's turns and the tools, and tap the loop's raw events;
 * `rx-tool-loop/sessions` is `compactWhen` from the build (a browser has no files for its JSONL store).
 */
import { build, type Plugin } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

export const root = resolve(__dirname, '..');
export const playgroundDir = join(root, 'playground');
export const outDir = join(playgroundDir, 'dist');
const marblesDir = join(root, 'marbles');
const esmDir = join(root, 'dist', 'esm');

/** The marble scenarios, by file name without `.marble.ts`, in order. */
export function scenarioIds(): string[] {
  return readdirSync(marblesDir)
    .filter((name) => name.endsWith('.marble.ts'))
    .map((name) => name.slice(0, -'.marble.ts'.length))
    .sort();
}

/** What the page shows of a scenario file besides running it: its doc comment and its `diagram` lines (name, marble). */
export interface ScenarioSource {
  id: string;
  doc: string;
  diagram: [string, string][];
}

export function readScenario(id: string): ScenarioSource {
  const source = readFileSync(join(marblesDir, `${id}.marble.ts`), 'utf8');
  const doc = /^\/\*\*([\s\S]*?)\*\//.exec(source)?.[1]?.replace(/^\s*\*\s?/gm, '').replace(/\s+/g, ' ').trim() ?? '';
  const block = /const diagram = \{\n([\s\S]*?)\n\};/.exec(source)?.[1] ?? '';
  const diagram = [...block.matchAll(/^\s*(\w+):\s*'([^']*)',?\s*$/gm)].map((match): [string, string] => [match[1]!, match[2]!]);
  return { id, doc, diagram };
}

const isMarble = (file: string) => dirname(file) === marblesDir && file.endsWith('.marble.ts');
const relativeSpecifier = (file: string) => `./${file.slice(root.length + 1).split('\\').join('/')}`;

function playgroundPlugin(): Plugin {
  return {
    name: 'rx-tool-loop-playground',
    setup(esbuild) {
      // every scenario file, imported for its scenario() call
      esbuild.onResolve({ filter: /^virtual:scenarios$/ }, () => ({ path: 'scenarios', namespace: 'playground' }));
      esbuild.onLoad({ filter: /^scenarios$/, namespace: 'playground' }, () => ({
        contents: scenarioIds().map((id) => `import ${JSON.stringify(relativeSpecifier(join(marblesDir, `${id}.marble.ts`)))};`).join('\n'),
        resolveDir: root,
        loader: 'js',
      }));
      // the package says it has no side effects; a scenario file's side effect is its scenario() call
      esbuild.onResolve({ filter: /\.marble\.ts$/, namespace: 'playground' }, ({ path }) => ({ path: join(root, path), sideEffects: true }));
      // a scenario file's jest glue: a module of its own, which knows the file it serves
      esbuild.onResolve({ filter: /^\.\/support\/scenario\.js$/ }, ({ importer }) =>
        isMarble(importer) ? { path: basename(importer, '.marble.ts'), namespace: 'scenario-file' } : undefined,
      );
      esbuild.onLoad({ filter: /.*/, namespace: 'scenario-file' }, ({ path }) => ({
        contents: [
          `import { fileScenario } from ${JSON.stringify(relativeSpecifier(join(playgroundDir, 'src', 'shim', 'registry.ts')))};`,
          `export { abortsAt } from ${JSON.stringify(relativeSpecifier(join(marblesDir, 'support', 'scenario.ts')))};`,
          `export const scenario = fileScenario(${JSON.stringify(readScenario(path))});`,
        ].join('\n'),
        resolveDir: root,
        loader: 'ts',
      }));
      // the library: its ESM build; for the scenario files, the shims over it
      esbuild.onResolve({ filter: /^rx-tool-loop(\/testing)?$/ }, ({ path, importer }) => {
        const testing = path.endsWith('/testing');
        if (isMarble(importer)) return { path: join(playgroundDir, 'src', 'shim', testing ? 'testing.ts' : 'library.ts') };
        return { path: join(esmDir, testing ? 'testing/index.js' : 'index.js') };
      });
      // a scenario's sessions import: compactWhen alone, from the build (the entry's JSONL store needs Node's fs)
      esbuild.onResolve({ filter: /^rx-tool-loop\/sessions$/ }, ({ importer }) =>
        isMarble(importer) ? { path: join(esmDir, 'sessions', 'compact-when.js') } : undefined,
      );
    },
  };
}

/** Bundles the page into playground/dist; needs dist/esm (`npm run build`). Returns the folder. */
export async function buildPlayground(): Promise<string> {
  if (!existsSync(join(esmDir, 'index.js'))) throw new Error('dist/esm is missing: run `npm run build` first');
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  await build({
    absWorkingDir: root,
    entryPoints: [join(playgroundDir, 'src', 'main.ts')],
    outfile: join(outDir, 'main.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    charset: 'utf8',
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [playgroundPlugin()],
  });
  for (const file of ['index.html', 'style.css']) copyFileSync(join(playgroundDir, file), join(outDir, file));
  return outDir;
}
