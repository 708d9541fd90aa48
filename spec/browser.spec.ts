/**
 * The library runs where there is no Node: its built files import nothing but each other and rxjs,
 * and the s04 scenario runs in a bare `vm` context whose only globals are what a browser has too.
 * Needs `npm run build` first (`npm test` does it).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { createContext, runInContext } from 'node:vm';

const root = join(__dirname, '..');
const dist = join(root, 'dist');

function files(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(folder, entry.name)) : entry.name.endsWith('.js') ? [join(folder, entry.name)] : [],
  );
}

function specifiers(source: string): string[] {
  // a doc comment's example names the package as a user imports it: that is text, not an import
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '');
  const found = [...code.matchAll(/(?:from\s*|import\s*\(\s*|require\s*\(\s*|^import\s+)['"]([^'"]+)['"]/gm)];
  return found.map((match) => match[1]!);
}

beforeAll(() => {
  if (!existsSync(join(dist, 'esm/index.js'))) throw new Error('dist/ is missing: run `npm run build` first');
});

describe('the built library in a browser', () => {
  it.each(['esm', 'cjs'])('dist/%s imports only its own files and rxjs (rxjs/testing: only the testing entry; an integration entry its own optional peer): no Node built-in but in the sessions entry (S3: jsonlStore) and the acp entry (E1: stdio)', (format) => {
    const imports = files(join(dist, format)).flatMap((file) => specifiers(readFileSync(file, 'utf8')).map((specifier) => ({ file, specifier })));
    const all = imports.map(({ specifier }) => specifier);
    expect(all.length).toBeGreaterThan(10);
    // an integration entry imports its own optional peer, and only it does (the main entry: rxjs alone)
    const peers: Record<string, RegExp> = { mcp: /^@modelcontextprotocol\/sdk\//, otel: /^@opentelemetry\/api$/, restate: /^@restatedev\/restate-sdk(\/|$)/, acp: /^@agentclientprotocol\/sdk$/ };
    const integration = (file: string, specifier: string) =>
      Object.entries(peers).some(([entry, peer]) => file.includes(`${format}/${entry}/`) && peer.test(specifier));
    // the recorder's text of a test file names the package too: that is a string, not an import
    const recorderText = (file: string, specifier: string) => file.endsWith('testing/replay-test.js') && /^rx-tool-loop(\/testing)?$/.test(specifier);
    const allowed = (file: string, specifier: string) =>
      specifier.startsWith('./') ||
      specifier.startsWith('../') ||
      specifier === 'rxjs' ||
      (specifier === 'rxjs/testing' && file.includes(`${format}/testing/`)) ||
      integration(file, specifier) ||
      recorderText(file, specifier);
    // rx-tool-loop/sessions is for Node: its JSONL store alone reads and writes files (and its lock file); so is
    // rx-tool-loop/acp, an editor's agent on stdio (E1): its server's default streams and session ids
    const nodeOnly = (file: string, specifier: string) =>
      (file.endsWith(`${format}/sessions/jsonl-store.js`) && (specifier === 'node:fs' || specifier === 'node:path')) ||
      (file.endsWith(`${format}/sessions/file-lock.js`) && specifier === 'node:fs') ||
      (file.endsWith(`${format}/acp/serve-acp.js`) && (specifier === 'node:crypto' || specifier === 'node:stream'));
    const foreign = imports.filter(({ file, specifier }) => !allowed(file, specifier) && !nodeOnly(file, specifier)).map(({ file, specifier }) => `${file}: ${specifier}`);
    expect(foreign).toEqual([]);
    const builtIns = imports.filter(({ specifier }) => specifier.startsWith('node:') || builtinModules.includes(specifier));
    expect(builtIns.filter(({ file, specifier }) => !nodeOnly(file, specifier))).toEqual([]);
    expect(builtIns.map(({ specifier }) => specifier).sort()).toEqual(['node:crypto', 'node:fs', 'node:fs', 'node:path', 'node:stream']);
  });

  it('runs the s04 scenario in a vm context without require, process or any Node global', () => {
    // what a browser page has: no require, no process, no Buffer
    const context = createContext({
      AbortController,
      AbortSignal,
      Event,
      EventTarget,
      TextDecoder,
      TextEncoder,
      structuredClone,
      setTimeout,
      clearTimeout,
      setInterval,
      clearInterval,
      queueMicrotask,
      console,
    });
    // a module loader for the page: relative files and packages only, never a built-in
    const cache = new Map<string, { exports: unknown }>();
    const load = (file: string): unknown => {
      const cached = cache.get(file);
      if (cached) return cached.exports;
      const module = { exports: {} as unknown };
      cache.set(file, module);
      const wrapper = runInContext(`(function (exports, require, module) {${readFileSync(file, 'utf8')}\n})`, context, { filename: file }) as (
        exports: unknown,
        require: (specifier: string) => unknown,
        module: { exports: unknown },
      ) => void;
      const requireFrom = (specifier: string): unknown => {
        if (specifier.startsWith('node:') || builtinModules.includes(specifier)) throw new Error(`${file} requires the Node built-in ${specifier}`);
        const target = specifier.startsWith('.') ? require.resolve(resolve(dirname(file), specifier)) : require.resolve(specifier, { paths: [root] });
        return load(target);
      };
      wrapper(module.exports, requireFrom, module);
      return module.exports;
    };
    const library = load(join(dist, 'cjs/index.js')) as typeof import('../src/index.js');
    expect(runInContext('typeof require + typeof process + typeof Buffer', context)).toBe('undefinedundefinedundefined');

    const registry = new library.ToolRegistry().register({ name: 'current_time', description: '', input: {}, handler: () => '2026-01-01T00:00:00Z' });
    const provider = library.scriptedProvider([
      [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'c1', name: 'current_time', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }],
      (input) => [{ type: 'message_start' }, { type: 'text_delta', text: `工具结果是：${input.messages[2]?.content}` }, { type: 'message_end', stopReason: 'stop' }],
    ]);
    const lines: string[] = [];
    library.runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: '现在几点？' }] }).subscribe((event) => {
      if (event.type === 'loop_end') lines.push(event.assistant.content, event.messages.map((m) => m.role).join(' -> '));
    });
    expect(lines).toEqual(['工具结果是：2026-01-01T00:00:00Z', 'user -> assistant -> toolResult -> assistant']);
  });
});
