/**
 * The package as users get it: `npm pack`, installed into a fresh project next to the project's own
 * rxjs, then used from CommonJS, from ESM and from TypeScript (against the installed .d.ts, with
 * `skipLibCheck: false`). Needs `npm run build` first (`npm test` does it).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { consumerDir } from './support/consumer-dir';

jest.setTimeout(180_000);

const root = join(__dirname, '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const rxjsVersion = (JSON.parse(readFileSync(join(root, 'node_modules/rxjs/package.json'), 'utf8')) as { version: string }).version;
let project = '';

const s04 = (load: string) => `${load}
const registry = new ToolRegistry().register({ name: 'current_time', description: 'the time', input: {}, handler: () => '2026-01-01T00:00:00Z' });
const provider = scriptedProvider([
  [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'c1', name: 'current_time', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }],
  (input) => [{ type: 'message_start' }, { type: 'text_delta', text: 'it is ' + input.messages[2].content }, { type: 'message_end', stopReason: 'stop' }],
]);
const loop = runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: '现在几点？' }] });
if (!(loop instanceof Observable)) throw new Error('two copies of rxjs: the loop is not an Observable of the app');
loop.subscribe((event) => {
  if (event.type === 'loop_end') console.log(event.assistant.content + ' | ' + event.messages.map((m) => m.role).join(' -> '));
});
`;

const consumerTs = `import { Observable, filter } from 'rxjs';
import { LoopEvent, Provider, ProviderEvent, Tool, ToolRegistry, runEventedToolLoop, MAX_TURNS } from 'rx-tool-loop';

const tool: Tool = { name: 'echo', description: 'echo', input: { text: 'what' }, handler: (input: Record<string, string>) => input.text ?? '' };
const provider: Provider = () => new Observable<ProviderEvent>((s) => { s.next({ type: 'message_start' }); s.next({ type: 'message_end', stopReason: 'stop' }); s.complete(); });
const events: Observable<LoopEvent> = runEventedToolLoop({ provider, registry: new ToolRegistry().register(tool), messages: [], maxTurns: MAX_TURNS });
events.pipe(filter((e): e is Extract<LoopEvent, { type: 'loop_end' }> => e.type === 'loop_end')).subscribe((e) => console.log(e.reason));
`;

// a marble test written with rx-tool-loop/testing, run by plain node: TestScheduler with node's assert
const marbleTest = (load: string) => `${load}
const events = { s: start, c: call('weather'), u: end('toolUse'), t: text('sunny'), e: end('stop') };
const legend = loopLegend(events, {
  1: 'turn_start 1', γ: 'tool_start weather', R: 'tool_result weather: sunny', 2: 'turn_start 2', L: 'loop_end stop',
  E: 'turn_end 1 (toolUse): user, assistant[weather], toolResult weather',
  F: 'turn_end 2 (stop): user, assistant[weather], toolResult weather, assistant "sunny"',
});
new TestScheduler((actual, expected) => assert.deepStrictEqual(actual, expected)).run((helpers) => {
  const { cold, expectObservable } = helpers;
  const provider = marbleProvider(cold('-s-c---u|', events), cold('-----s-t-e|', events));
  const registry = marbleTools({ weather: cold('-----(R|)', { R: 'sunny' }) });
  const run = runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'weather?' }] });
  expectObservable(run.pipe(described)).toBe('1s-(cγ)u(RE2)s-t-e(FL|)', legend);
});
let message = '';
new TestScheduler(() => undefined).run((helpers) => {
  const provider = marbleProvider(helpers.cold('-s-e|', { s: start, e: end('stop') }));
  try {
    expectLoop(helpers, runEventedToolLoop({ provider, registry: marbleTools({}), messages: [] })).toBe('1s-e|', legend);
  } catch (error) {
    message = error.message.split('\\n')[2];
  }
});
console.log('marble test passed;' + message);
`;
const marbleExpected = 'marble test passed;  actual:   1s-e(GL|)\n';

const consumerTestingTs = `import { TestScheduler } from 'rxjs/testing';
import { runEventedToolLoop, type ProviderEvent } from 'rx-tool-loop';
import { call, described, end, expectLoop, loopLegend, marbleProvider, marbleTools, recordMarbles, start, text, type MarbleRecording } from 'rx-tool-loop/testing';

const events: Record<string, ProviderEvent> = { s: start, c: call('weather', { city: 'Paris' }), t: text('hi'), e: end('stop', { errorMessage: 'x' }) };
new TestScheduler(() => undefined).run((helpers) => {
  const provider = marbleProvider(helpers.cold('-s-e|', events));
  const run = runEventedToolLoop({ provider, registry: marbleTools({ weather: 'sunny', clock: () => '12:00' }), messages: [] });
  expectLoop(helpers, run).toBe('1s-e|', loopLegend(events, { 1: 'turn_start 1' }));
  recordMarbles(run.pipe()).subscribe((recording: MarbleRecording) => recording.diagram.length + provider.inputs.length);
  run.pipe(described).subscribe((line: string) => line.length);
});
`;

const expected = 'it is 2026-01-01T00:00:00Z | user -> assistant -> toolResult -> assistant\n';

// S1–S4 from the installed package: a conversation saved to a JSONL file, loaded again, and the store suite run by plain node
const sessions = (load: string, file: string) => `${load}
const registry = new ToolRegistry().register({ name: 'current_time', description: 'the time', input: {}, handler: () => '2026-01-01T00:00:00Z' });
const provider = scriptedProvider([
  [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'c1', name: 'current_time', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }],
  [{ type: 'message_start' }, { type: 'text_delta', text: 'noon' }, { type: 'message_end', stopReason: 'stop' }],
]);
const store = jsonlStore('${file}');
SessionTree.load(store)
  .pipe(
    switchMap((tree) => of('现在几点？').pipe(conversation({ provider, registry, messages: tree.context() }), persist(tree, store), last())),
    switchMap(() => SessionTree.load(jsonlStore('${file}'))),
  )
  .subscribe(async (tree) => {
    const checks = storeConformance(() => memoryStore());
    for (const check of checks) await check.run();
    console.log(tree.context().map((m) => m.role).join(' -> ') + ' | ' + checks.length + ' checks passed');
  });
`;
const sessionsExpected = 'user -> assistant -> toolResult -> assistant | 7 checks passed\n';

const consumerSessionsTs = `import { of } from 'rxjs';
import { ToolRegistry, conversation, scriptedProvider, type PrepareTurn } from 'rx-tool-loop';
import { SessionTree, compactWhen, jsonlStore, memoryStore, persist, type SessionEntry, type SessionStore } from 'rx-tool-loop/sessions';
import { storeConformance, type StoreCheck } from 'rx-tool-loop/sessions/testing';

const store: SessionStore = memoryStore();
const prepareTurn: PrepareTurn = compactWhen({ maxTokens: 1000, keepRecentTokens: 100, summarize: (messages) => of(String(messages.length)) });
SessionTree.load(store).subscribe((tree: SessionTree) => {
  of('hi').pipe(conversation({ provider: scriptedProvider([]), registry: new ToolRegistry(), messages: tree.context(), prepareTurn }), persist(tree, jsonlStore('x.jsonl'))).subscribe();
  const leaf: string | null = tree.leaf;
  const entries: SessionEntry[] = tree.path(leaf);
  if (entries[0] !== undefined) tree.moveTo(entries[0].id);
});
const checks: StoreCheck[] = storeConformance(() => store);
checks.forEach((check) => check.name.length);
`;

beforeAll(() => {
  if (!existsSync(join(root, 'dist/cjs/index.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  project = consumerDir('rx-tool-loop-consumer-');
  const [packed] = JSON.parse(
    execFileSync(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', project], { cwd: root, encoding: 'utf8' }),
  ) as { filename: string }[];
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
  execFileSync(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', join(project, packed!.filename), `rxjs@${rxjsVersion}`], {
    cwd: project,
    stdio: 'pipe',
  });
});

afterAll(() => {
  if (project !== '') rmSync(project, { recursive: true, force: true });
});

describe('the installed package', () => {
  it('holds dist, README and CONTRACT only, with rxjs as a peer (one copy: the app\'s)', () => {
    const installed = join(project, 'node_modules/rx-tool-loop');
    expect(readFileSync(join(installed, 'CONTRACT.md'), 'utf8')).toBe(readFileSync(join(root, 'CONTRACT.md'), 'utf8'));
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules/rx-tool-loop/package.json'), 'utf8')) as Record<string, unknown>;
    const peers = manifest.peerDependencies as Record<string, string>;
    expect(peers.rxjs).toMatch(/^\^7\.8/);
    // every other peer is an integration's (a subpath entry), optional: who never imports it never installs it
    const meta = (manifest.peerDependenciesMeta ?? {}) as Record<string, { optional?: boolean }>;
    expect(Object.keys(peers).filter((name) => name !== 'rxjs' && meta[name]?.optional !== true)).toEqual([]);
    expect(existsSync(join(project, 'node_modules/@restatedev'))).toBe(false);
    expect(manifest.dependencies).toBeUndefined();
    expect(existsSync(join(project, 'node_modules/rx-tool-loop/node_modules'))).toBe(false);
    expect(existsSync(join(project, 'node_modules/rx-tool-loop/src'))).toBe(false);
  });

  it('runs the s04 scenario from CommonJS (require)', () => {
    const script = s04("const { Observable } = require('rxjs');\nconst { ToolRegistry, runEventedToolLoop, scriptedProvider } = require('rx-tool-loop');");
    writeFileSync(join(project, 'consumer.cjs'), script);
    expect(execFileSync(process.execPath, ['consumer.cjs'], { cwd: project, encoding: 'utf8' })).toBe(expected);
  });

  it('runs the s04 scenario from ES modules (import)', () => {
    const script = s04("import { Observable } from 'rxjs';\nimport { ToolRegistry, runEventedToolLoop, scriptedProvider } from 'rx-tool-loop';");
    writeFileSync(join(project, 'consumer.mjs'), script);
    expect(execFileSync(process.execPath, ['consumer.mjs'], { cwd: project, encoding: 'utf8' })).toBe(expected);
  });

  it('runs a marble test written with rx-tool-loop/testing from CommonJS (require)', () => {
    const load = "const assert = require('node:assert');\nconst { TestScheduler } = require('rxjs/testing');\nconst { runEventedToolLoop } = require('rx-tool-loop');\nconst { call, described, end, expectLoop, loopLegend, marbleProvider, marbleTools, start, text } = require('rx-tool-loop/testing');";
    writeFileSync(join(project, 'marbles.cjs'), marbleTest(load));
    expect(execFileSync(process.execPath, ['marbles.cjs'], { cwd: project, encoding: 'utf8' })).toBe(marbleExpected);
  });

  it('runs a marble test written with rx-tool-loop/testing from ES modules (import)', () => {
    const load = "import assert from 'node:assert';\nimport { TestScheduler } from 'rxjs/testing';\nimport { runEventedToolLoop } from 'rx-tool-loop';\nimport { call, described, end, expectLoop, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';";
    writeFileSync(join(project, 'marbles.mjs'), marbleTest(load));
    expect(execFileSync(process.execPath, ['marbles.mjs'], { cwd: project, encoding: 'utf8' })).toBe(marbleExpected);
  });

  it('runs a session saved to a JSONL file, and the store suite, from CommonJS (rx-tool-loop/sessions, rx-tool-loop/sessions/testing)', () => {
    const load = "const { last, of, switchMap } = require('rxjs');\nconst { ToolRegistry, conversation, scriptedProvider } = require('rx-tool-loop');\nconst { SessionTree, jsonlStore, memoryStore, persist } = require('rx-tool-loop/sessions');\nconst { storeConformance } = require('rx-tool-loop/sessions/testing');";
    writeFileSync(join(project, 'sessions.cjs'), sessions(load, 'session-cjs.jsonl'));
    expect(execFileSync(process.execPath, ['sessions.cjs'], { cwd: project, encoding: 'utf8' })).toBe(sessionsExpected);
  });

  it('runs a session saved to a JSONL file, and the store suite, from ES modules (rx-tool-loop/sessions, rx-tool-loop/sessions/testing)', () => {
    const load = "import { last, of, switchMap } from 'rxjs';\nimport { ToolRegistry, conversation, scriptedProvider } from 'rx-tool-loop';\nimport { SessionTree, jsonlStore, memoryStore, persist } from 'rx-tool-loop/sessions';\nimport { storeConformance } from 'rx-tool-loop/sessions/testing';";
    writeFileSync(join(project, 'sessions.mjs'), sessions(load, 'session-esm.jsonl'));
    expect(execFileSync(process.execPath, ['sessions.mjs'], { cwd: project, encoding: 'utf8' })).toBe(sessionsExpected);
  });

  it('loads the main entry and every other subpath without @restatedev/restate-sdk installed; rx-tool-loop/restate names the missing package', () => {
    const script = "for (const entry of ['rx-tool-loop', 'rx-tool-loop/testing', 'rx-tool-loop/sessions', 'rx-tool-loop/sessions/testing']) require(entry);\n" +
      "try { require('rx-tool-loop/restate'); } catch (error) { console.log(error.code + ' ' + /@restatedev\\/restate-sdk/.test(error.message)); }";
    writeFileSync(join(project, 'restate-missing.cjs'), script);
    expect(execFileSync(process.execPath, ['restate-missing.cjs'], { cwd: project, encoding: 'utf8' })).toBe('MODULE_NOT_FOUND true\n');
  });

  it('D1, D2: with @restatedev/restate-sdk installed, rx-tool-loop/restate runs from CommonJS and ES modules, and a TypeScript consumer of it type-checks against the installed .d.ts', () => {
    const versionOf = (name: string) => (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
    const sdk = versionOf('@restatedev/restate-sdk');
    const withSdk = join(project, 'with-sdk');
    mkdirSync(withSdk, { recursive: true });
    writeFileSync(join(withSdk, 'package.json'), JSON.stringify({ name: 'with-sdk', version: '1.0.0', private: true }));
    const packed = readdirSync(project).find((name) => name.endsWith('.tgz'))!;
    execFileSync(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', join(project, packed), `rxjs@${rxjsVersion}`, `@restatedev/restate-sdk@${sdk}`, `@types/node@${versionOf('@types/node')}`], { cwd: withSdk, stdio: 'pipe' });
    const body = `
const entries = [];
const journal = { run: (name, fn) => fn().then((value) => (entries.push(name), JSON.parse(JSON.stringify(value)))) };
const provider = scriptedProvider([[{ type: 'message_start' }, { type: 'text_delta', text: 'a' }, { type: 'text_delta', text: 'b' }, { type: 'message_end', stopReason: 'stop' }]]);
const chat = conversationObject('chat', () => ({ provider, registry: new ToolRegistry() }));
lastValueFrom(durableLoop(journal, { provider, registry: new ToolRegistry(), messages: [] })).then((end) => console.log(chat.name + ' ' + Object.keys(chat.object).sort().join(',') + ' ' + end.assistant.content + ' ' + entries.join(',')));
`;
    writeFileSync(join(withSdk, 'durable.cjs'), "const { lastValueFrom } = require('rxjs');\nconst { ToolRegistry, scriptedProvider } = require('rx-tool-loop');\nconst { conversationObject, durableLoop } = require('rx-tool-loop/restate');" + body);
    writeFileSync(join(withSdk, 'durable.mjs'), "import { lastValueFrom } from 'rxjs';\nimport { ToolRegistry, scriptedProvider } from 'rx-tool-loop';\nimport { conversationObject, durableLoop } from 'rx-tool-loop/restate';" + body);
    for (const file of ['durable.cjs', 'durable.mjs']) {
      expect(execFileSync(process.execPath, [file], { cwd: withSdk, encoding: 'utf8' })).toBe('chat approve,ask,history ab model call 1\n');
    }
    writeFileSync(join(withSdk, 'consumer.mts'), `import { ToolRegistry, scriptedProvider, type LoopEvent } from 'rx-tool-loop';
import { conversationObject, durableLoop, type AskResult, type ApprovalWaiting, type Journal } from 'rx-tool-loop/restate';
const journal: Journal = { run: (_name, fn) => fn() };
const chat = conversationObject('chat', (key: string) => ({ provider: scriptedProvider([]), registry: new ToolRegistry(), needsApproval: () => true, announce: (w: ApprovalWaiting) => void w.awakeableId.concat(key) }));
const name: 'chat' = chat.name;
durableLoop(journal, { provider: scriptedProvider([]), registry: new ToolRegistry(), messages: [] }).subscribe((event: LoopEvent) => event.type);
const answer = (result: AskResult) => result.assistant.content + name;
answer;
`);
    // the SDK's own declarations need Node's types (node:http2): a Restate service is a Node program
    const config = { compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, module: 'nodenext', moduleResolution: 'nodenext', target: 'ES2022', lib: ['ES2022', 'DOM'], types: ['node'] }, files: ['consumer.mts'] };
    writeFileSync(join(withSdk, 'tsconfig.json'), JSON.stringify(config));
    const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
    let errors = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: withSdk, encoding: 'utf8', stdio: 'pipe' });
    } catch (error) {
      errors = String((error as { stdout?: string }).stdout);
    }
    expect(errors).toBe('');
  });

  it.each([
    ['nodenext (CommonJS consumer)', 'nodenext', 'nodenext', 'consumer.cts'],
    ['nodenext (ESM consumer)', 'nodenext', 'nodenext', 'consumer.mts'],
    ['bundler', 'esnext', 'bundler', 'consumer.ts'],
  ])('type-checks a TypeScript consumer of every entry (sessions and sessions/testing too: no Node types needed), %s, against the installed .d.ts with skipLibCheck false', (_label, module, resolution, file) => {
    writeFileSync(join(project, file), consumerTs);
    const testing = file.replace('consumer', 'testing-consumer');
    writeFileSync(join(project, testing), consumerTestingTs);
    const sessionsFile = file.replace('consumer', 'sessions-consumer');
    writeFileSync(join(project, sessionsFile), consumerSessionsTs);
    const config = {
      compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, module, moduleResolution: resolution, target: 'ES2022', lib: ['ES2022', 'DOM'], types: [] },
      files: [file, testing, sessionsFile],
    };
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(config));
    const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
    expect(() => execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8', stdio: 'pipe' })).not.toThrow();
  });
});

// M1: rx-tool-loop/mcp is the only entry that imports @modelcontextprotocol/sdk, an optional peer dependency
const sdkVersion = (JSON.parse(readFileSync(join(root, 'node_modules/@modelcontextprotocol/sdk/package.json'), 'utf8')) as { version: string }).version;
const zodVersion = (JSON.parse(readFileSync(join(root, 'node_modules/zod/package.json'), 'utf8')) as { version: string }).version;

const mcpScript = (load: string) => `${load}
const server = new McpServer({ name: 'tiny', version: '1.0.0' });
server.registerTool('greet', { description: 'says hello' }, () => ({ content: [{ type: 'text', text: 'hello' }] }));
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
const client = new Client({ name: 'consumer', version: '1.0.0' });
Promise.all([server.connect(serverSide), client.connect(clientSide)]).then(async () => {
  const registry = new ToolRegistry();
  const provider = scriptedProvider([
    [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'c1', name: 'tiny_greet', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }],
    (input) => [{ type: 'message_start' }, { type: 'text_delta', text: 'it said ' + input.messages[2].content }, { type: 'message_end', stopReason: 'stop' }],
  ]);
  const end = await lastValueFrom(syncTools(registry, mcpTools(client, { prefix: 'tiny_' })).pipe(
    exhaustMap(() => runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'greet' }] })),
    takeWhile((event) => event.type !== 'loop_end', true),
  ));
  console.log(end.assistant.content);
  await client.close();
});
`;

const consumerMcpTs = `import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Observable } from 'rxjs';
import { ToolRegistry, type Tool } from 'rx-tool-loop';
import { MCP_CANCEL_REASON, mcpTools, syncTools, type McpToolsOptions } from 'rx-tool-loop/mcp';

const client = new Client({ name: 'consumer', version: '1.0.0' });
const options: McpToolsOptions = { prefix: 'fs_', filter: (tool) => tool.annotations?.readOnlyHint === true, callTimeoutMs: 30_000 };
const tools$: Observable<Tool[]> = syncTools(new ToolRegistry(), mcpTools(client, options));
tools$.subscribe((tools) => tools.length + MCP_CANCEL_REASON.length);
`;

describe('rx-tool-loop/mcp and its optional peer', () => {
  it('M1: without @modelcontextprotocol/sdk installed the main entry works, and rx-tool-loop/mcp says what it misses', () => {
    expect(existsSync(join(project, 'node_modules/@modelcontextprotocol'))).toBe(false);
    writeFileSync(join(project, 'no-sdk.cjs'), "require('rx-tool-loop'); require('rx-tool-loop/testing'); console.log('main entry ok');");
    expect(execFileSync(process.execPath, ['no-sdk.cjs'], { cwd: project, encoding: 'utf8' })).toBe('main entry ok\n');
    writeFileSync(join(project, 'no-sdk-mcp.cjs'), "require('rx-tool-loop/mcp');");
    expect(() => execFileSync(process.execPath, ['no-sdk-mcp.cjs'], { cwd: project, encoding: 'utf8', stdio: 'pipe' })).toThrow(/Cannot find module '@modelcontextprotocol\/sdk/);
  });

  describe('with the SDK installed', () => {
    beforeAll(() => {
      execFileSync(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', `@modelcontextprotocol/sdk@${sdkVersion}`, `zod@${zodVersion}`], { cwd: project, stdio: 'pipe' });
    });

    it.each([
      ['CommonJS (require)', 'mcp.cjs', "const { lastValueFrom, exhaustMap, takeWhile } = require('rxjs');\nconst { ToolRegistry, runEventedToolLoop, scriptedProvider } = require('rx-tool-loop');\nconst { mcpTools, syncTools } = require('rx-tool-loop/mcp');\nconst { Client } = require('@modelcontextprotocol/sdk/client/index.js');\nconst { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');\nconst { InMemoryTransport } = require('@modelcontextprotocol/sdk/inMemory.js');"],
      ['ES modules (import)', 'mcp.mjs', "import { lastValueFrom, exhaustMap, takeWhile } from 'rxjs';\nimport { ToolRegistry, runEventedToolLoop, scriptedProvider } from 'rx-tool-loop';\nimport { mcpTools, syncTools } from 'rx-tool-loop/mcp';\nimport { Client } from '@modelcontextprotocol/sdk/client/index.js';\nimport { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';\nimport { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';"],
    ])('M1: rx-tool-loop/mcp gives a loop the tools of an MCP server, from %s', (_label, file, load) => {
      writeFileSync(join(project, file), mcpScript(load));
      expect(execFileSync(process.execPath, [file], { cwd: project, encoding: 'utf8' })).toBe('it said hello\n');
    });

    it.each([
      ['nodenext (CommonJS consumer)', 'nodenext', 'nodenext', 'mcp-consumer.cts'],
      ['nodenext (ESM consumer)', 'nodenext', 'nodenext', 'mcp-consumer.mts'],
      ['bundler', 'esnext', 'bundler', 'mcp-consumer.ts'],
    ])('M1: type-checks a consumer of rx-tool-loop/mcp with the SDK\'s Client, %s', (_label, module, resolution, file) => {
      writeFileSync(join(project, file), consumerMcpTs);
      const config = {
        compilerOptions: { strict: true, noEmit: true, skipLibCheck: true, module, moduleResolution: resolution, target: 'ES2022', lib: ['ES2022', 'DOM'], types: [] },
        files: [file],
      };
      writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(config));
      const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
      expect(() => execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8', stdio: 'pipe' })).not.toThrow();
    });
  });
});

// O1: rx-tool-loop/otel, whose @opentelemetry/api is an optional peer: the main entry never needs it
const tracedS04 = (load: string) => `${load}
const exporter = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('consumer');
const registry = new ToolRegistry().register({ name: 'current_time', description: 'the time', input: {}, handler: () => 'noon' });
const provider = scriptedProvider([
  [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'c1', name: 'current_time', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }],
  [{ type: 'message_start' }, { type: 'text_delta', text: 'noon' }, { type: 'message_end', stopReason: 'stop' }],
]);
runEventedToolLoop({ provider, registry, messages: [] }).pipe(traceLoop({ tracer, agentName: 'clock' })).subscribe({
  complete: () => console.log(exporter.getFinishedSpans().map((span) => span.name).join(' | ')),
});
`;
const tracedExpected = 'execute_tool current_time | chat | chat | invoke_agent clock\n';

const consumerOtelTs = `import { trace } from '@opentelemetry/api';
import { runEventedToolLoop, ToolRegistry, type LoopEvent, type Provider } from 'rx-tool-loop';
import { toolSpanContext, traceLoop, type TraceLoopOptions } from 'rx-tool-loop/otel';
import type { Observable } from 'rxjs';

const options: TraceLoopOptions = { tracer: trace.getTracer('consumer'), agentName: 'a', model: 'm', recordContent: true };
declare const provider: Provider;
const traced: Observable<LoopEvent> = runEventedToolLoop({ provider, registry: new ToolRegistry(), messages: [] }).pipe(traceLoop(options));
toolSpanContext({ id: 'c1', name: 'x', input: {} });
traced.subscribe();
`;

describe('rx-tool-loop/otel, with @opentelemetry/api an optional peer', () => {
  it('O1: the main entry runs without @opentelemetry/api installed, and the subpath then says what is missing', () => {
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules/rx-tool-loop/package.json'), 'utf8')) as Record<string, Record<string, unknown>>;
    expect(manifest.peerDependenciesMeta).toMatchObject({ '@opentelemetry/api': { optional: true } });
    expect(existsSync(join(project, 'node_modules/@opentelemetry/api'))).toBe(false);
    // only the subpath's own files name it
    const dist = join(project, 'node_modules/rx-tool-loop/dist');
    const naming = (readdirSync(dist, { recursive: true }) as string[]).filter((file) => file.endsWith('.js') && readFileSync(join(dist, file), 'utf8').includes('@opentelemetry'));
    expect(naming.length).toBeGreaterThan(0);
    expect(naming.filter((file) => !file.split(/[\\/]/).includes('otel'))).toEqual([]);
    writeFileSync(join(project, 'main-only.cjs'), s04("const { Observable } = require('rxjs');\nconst { ToolRegistry, runEventedToolLoop, scriptedProvider } = require('rx-tool-loop');"));
    writeFileSync(join(project, 'main-only.mjs'), s04("import { Observable } from 'rxjs';\nimport { ToolRegistry, runEventedToolLoop, scriptedProvider } from 'rx-tool-loop';"));
    expect(execFileSync(process.execPath, ['main-only.cjs'], { cwd: project, encoding: 'utf8' })).toBe(expected);
    expect(execFileSync(process.execPath, ['main-only.mjs'], { cwd: project, encoding: 'utf8' })).toBe(expected);
    writeFileSync(join(project, 'otel-missing.cjs'), "require('rx-tool-loop/otel');");
    expect(() => execFileSync(process.execPath, ['otel-missing.cjs'], { cwd: project, encoding: 'utf8', stdio: 'pipe' })).toThrow(/Cannot find module '@opentelemetry\/api'/);
  });

  describe('installed beside it', () => {
    beforeAll(() => {
      const version = (name: string) => (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
      const packages = ['@opentelemetry/api', '@opentelemetry/sdk-trace-base'].map((name) => `${name}@${version(name)}`);
      execFileSync(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', ...packages], { cwd: project, stdio: 'pipe' });
    });

    it('O1: traces the s04 run from CommonJS (require)', () => {
      const load = "const { ToolRegistry, runEventedToolLoop, scriptedProvider } = require('rx-tool-loop');\nconst { traceLoop } = require('rx-tool-loop/otel');\nconst { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');";
      writeFileSync(join(project, 'otel.cjs'), tracedS04(load));
      expect(execFileSync(process.execPath, ['otel.cjs'], { cwd: project, encoding: 'utf8' })).toBe(tracedExpected);
    });

    it('O1: traces the s04 run from ES modules (import)', () => {
      const load = "import { ToolRegistry, runEventedToolLoop, scriptedProvider } from 'rx-tool-loop';\nimport { traceLoop } from 'rx-tool-loop/otel';\nimport { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';";
      writeFileSync(join(project, 'otel.mjs'), tracedS04(load));
      expect(execFileSync(process.execPath, ['otel.mjs'], { cwd: project, encoding: 'utf8' })).toBe(tracedExpected);
    });

    it.each([
      ['nodenext (CommonJS consumer)', 'nodenext', 'nodenext', 'otel-consumer.cts'],
      ['nodenext (ESM consumer)', 'nodenext', 'nodenext', 'otel-consumer.mts'],
      ['node10 (typesVersions)', 'commonjs', 'node10', 'otel-consumer-node10.ts'],
    ])('O1: type-checks a TypeScript consumer of rx-tool-loop/otel, %s, with skipLibCheck false', (_label, module, resolution, file) => {
      writeFileSync(join(project, file), consumerOtelTs);
      const config = {
        compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, module, moduleResolution: resolution, target: 'ES2022', lib: ['ES2022', 'DOM'], types: [], ignoreDeprecations: '6.0' },
        files: [file],
      };
      writeFileSync(join(project, 'tsconfig.otel.json'), JSON.stringify(config));
      const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
      expect(() => execFileSync(process.execPath, [tsc, '-p', 'tsconfig.otel.json'], { cwd: project, encoding: 'utf8', stdio: 'pipe' })).not.toThrow();
    });
  });
});

// P18: rx-tool-loop/ai-sdk takes only types from its optional peer @ai-sdk/provider: it runs without it
const aiSdkS04 = (load: string) => `${load}
const registry = new ToolRegistry().register({ name: 'current_time', description: 'the time', input: {}, handler: () => 'noon' });
const usage = { inputTokens: { total: 3 }, outputTokens: { total: 1 } };
const model = {
  specificationVersion: 'v4', provider: 'by-hand.chat', modelId: 'm1', supportedUrls: {},
  doGenerate: () => Promise.reject(new Error('streams only')),
  doStream: async ({ prompt }) => ({
    stream: new ReadableStream({
      start(controller) {
        const tool = prompt.find((message) => message.role === 'tool');
        if (tool === undefined) controller.enqueue({ type: 'tool-call', toolCallId: 'c1', toolName: 'current_time', input: '{}' });
        else controller.enqueue({ type: 'text-delta', id: 't', delta: 'it is ' + tool.content[0].output.value });
        controller.enqueue({ type: 'finish', finishReason: { unified: tool === undefined ? 'tool-calls' : 'stop', raw: undefined }, usage });
        controller.close();
      },
    }),
  }),
};
runEventedToolLoop({ provider: languageModelProvider(model), registry, messages: [{ role: 'user', content: 'time?' }] }).subscribe((event) => {
  if (event.type === 'loop_end') console.log(event.assistant.content + ' | ' + event.messages.map((m) => m.role).join(' -> ') + ' | ' + event.usage.inputTokens);
});
`;
const aiSdkExpected = 'it is noon | user -> assistant -> toolResult -> assistant | 6\n';

const consumerAiSdkTs = `import type { LanguageModelV3, LanguageModelV4 } from '@ai-sdk/provider';
import { runEventedToolLoop, ToolRegistry, type Provider } from 'rx-tool-loop';
import { languageModelProvider, type LanguageModelProviderOptions } from 'rx-tool-loop/ai-sdk';

declare const v3: LanguageModelV3;
declare const v4: LanguageModelV4;
const options: LanguageModelProviderOptions = { system: 'Be brief.', maxTokens: 100, providerOptions: { openai: { store: false } } };
const providers: Provider[] = [languageModelProvider(v3), languageModelProvider(v4, options)];
const named: string = languageModelProvider(v4).providerName;
runEventedToolLoop({ provider: providers[0]!, registry: new ToolRegistry(), messages: [] }).subscribe();
named.length;
`;

describe('rx-tool-loop/ai-sdk, with @ai-sdk/provider an optional peer of types only', () => {
  it('P18: runs a hand-written LanguageModelV4 through the loop from CommonJS and ES modules without @ai-sdk/provider installed', () => {
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules/rx-tool-loop/package.json'), 'utf8')) as Record<string, Record<string, unknown>>;
    expect(manifest.peerDependenciesMeta).toMatchObject({ '@ai-sdk/provider': { optional: true } });
    expect(existsSync(join(project, 'node_modules/@ai-sdk/provider'))).toBe(false);
    writeFileSync(join(project, 'ai-sdk.cjs'), aiSdkS04("const { ToolRegistry, runEventedToolLoop } = require('rx-tool-loop');\nconst { languageModelProvider } = require('rx-tool-loop/ai-sdk');"));
    writeFileSync(join(project, 'ai-sdk.mjs'), aiSdkS04("import { ToolRegistry, runEventedToolLoop } from 'rx-tool-loop';\nimport { languageModelProvider } from 'rx-tool-loop/ai-sdk';"));
    expect(execFileSync(process.execPath, ['ai-sdk.cjs'], { cwd: project, encoding: 'utf8' })).toBe(aiSdkExpected);
    expect(execFileSync(process.execPath, ['ai-sdk.mjs'], { cwd: project, encoding: 'utf8' })).toBe(aiSdkExpected);
  });

  it('P18: with @ai-sdk/provider installed beside it, a TypeScript consumer of rx-tool-loop/ai-sdk type-checks (nodenext CommonJS and ESM, skipLibCheck false)', () => {
    const version = (JSON.parse(readFileSync(join(root, 'node_modules/@ai-sdk/provider/package.json'), 'utf8')) as { version: string }).version;
    const withPeer = join(project, 'with-ai-sdk');
    mkdirSync(withPeer, { recursive: true });
    writeFileSync(join(withPeer, 'package.json'), JSON.stringify({ name: 'with-ai-sdk', version: '1.0.0', private: true }));
    const packed = readdirSync(project).find((name) => name.endsWith('.tgz'))!;
    // @ai-sdk/provider's declarations import 'json-schema', whose types it leaves to its users (its own build pins 7.0.15)
    const packages = [join(project, packed), `rxjs@${rxjsVersion}`, `@ai-sdk/provider@${version}`, '@types/json-schema@7.0.15'];
    execFileSync(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', ...packages], { cwd: withPeer, stdio: 'pipe' });
    const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
    for (const file of ['consumer.cts', 'consumer.mts']) {
      writeFileSync(join(withPeer, file), consumerAiSdkTs);
      const config = { compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, module: 'nodenext', moduleResolution: 'nodenext', target: 'ES2022', lib: ['ES2022', 'DOM'], types: [] }, files: [file] };
      writeFileSync(join(withPeer, 'tsconfig.json'), JSON.stringify(config));
      let errors = '';
      try {
        execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: withPeer, encoding: 'utf8', stdio: 'pipe' });
      } catch (error) {
        errors = String((error as { stdout?: string }).stdout);
      }
      expect(errors).toBe('');
    }
  });
});

// E1: rx-tool-loop/acp, whose @agentclientprotocol/sdk is an optional peer: the main entry never needs it
const acpVersion = (JSON.parse(readFileSync(join(root, 'node_modules/@agentclientprotocol/sdk/package.json'), 'utf8')) as { version: string }).version;

/** serveAcp on two web streams, driven by the SDK's client: one prompt, its text and its stop reason. */
const acpScript = (load: string) => `${load}
const toAgent = new TransformStream();
const toEditor = new TransformStream();
const provider = scriptedProvider([[{ type: 'message_start' }, { type: 'text_delta', text: 'hi there' }, { type: 'message_end', stopReason: 'stop' }]]);
const served = serveAcp({ agent: { provider, registry: new ToolRegistry() }, input: toAgent.readable, output: toEditor.writable }).subscribe();
const said = [];
const editor = client({ name: 'consumer' })
  .onNotification('session/update', ({ params }) => void said.push(params.update.content.text))
  .connect(ndJsonStream(toAgent.writable, toEditor.readable));
(async () => {
  const { agentCapabilities } = await editor.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  const { sessionId } = await editor.agent.request('session/new', { cwd: process.cwd(), mcpServers: [] });
  const { stopReason } = await editor.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
  console.log(agentCapabilities.loadSession + ' ' + stopReason + ' ' + said.join(''));
  served.unsubscribe();
  editor.close();
})();
`;

const consumerAcpTs = `import { ToolRegistry, scriptedProvider } from 'rx-tool-loop';
import { acpPrompt, acpUpdates, guessToolKind, serveAcp, type AcpAgent, type AcpSession, type ServeAcpOptions, type ToolKindOf } from 'rx-tool-loop/acp';
import type { Observable } from 'rxjs';

const agent: AcpAgent = { provider: scriptedProvider([]), registry: new ToolRegistry() };
const kind: ToolKindOf = (call) => (call.name === 'x' ? 'read' : guessToolKind(call));
const options: ServeAcpOptions = { agent: (session: AcpSession) => ({ ...agent, maxTurns: session.cwd.length }), toolKind: kind, needsApproval: () => true };
const served: Observable<never> = serveAcp(options);
served.subscribe();
acpUpdates({ type: 'text_delta', text: 'a' }).length + acpPrompt([{ type: 'text', text: 'b' }]).content.length;
`;

describe('rx-tool-loop/acp, with @agentclientprotocol/sdk an optional peer', () => {
  it('E1: the main entry runs without @agentclientprotocol/sdk installed, and rx-tool-loop/acp then names it', () => {
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules/rx-tool-loop/package.json'), 'utf8')) as Record<string, Record<string, unknown>>;
    expect(manifest.peerDependenciesMeta).toMatchObject({ '@agentclientprotocol/sdk': { optional: true } });
    expect(existsSync(join(project, 'node_modules/@agentclientprotocol'))).toBe(false);
    // only the subpath's own files name it
    const dist = join(project, 'node_modules/rx-tool-loop/dist');
    const naming = (readdirSync(dist, { recursive: true }) as string[]).filter((file) => file.endsWith('.js') && readFileSync(join(dist, file), 'utf8').includes('@agentclientprotocol'));
    expect(naming.length).toBeGreaterThan(0);
    expect(naming.filter((file) => !file.split(/[\\/]/).includes('acp'))).toEqual([]);
    writeFileSync(join(project, 'acp-main-only.cjs'), s04("const { Observable } = require('rxjs');\nconst { ToolRegistry, runEventedToolLoop, scriptedProvider } = require('rx-tool-loop');"));
    expect(execFileSync(process.execPath, ['acp-main-only.cjs'], { cwd: project, encoding: 'utf8' })).toBe(expected);
    writeFileSync(join(project, 'acp-missing.cjs'), "require('rx-tool-loop/acp');");
    expect(() => execFileSync(process.execPath, ['acp-missing.cjs'], { cwd: project, encoding: 'utf8', stdio: 'pipe' })).toThrow(/Cannot find module '@agentclientprotocol\/sdk'/);
    writeFileSync(join(project, 'acp-missing.mjs'), "import 'rx-tool-loop/acp';");
    expect(() => execFileSync(process.execPath, ['acp-missing.mjs'], { cwd: project, encoding: 'utf8', stdio: 'pipe' })).toThrow(/Cannot find package '@agentclientprotocol\/sdk'/);
  });

  describe('installed beside it', () => {
    let withAcp = '';
    beforeAll(() => {
      withAcp = join(project, 'with-acp');
      mkdirSync(withAcp, { recursive: true });
      writeFileSync(join(withAcp, 'package.json'), JSON.stringify({ name: 'with-acp', version: '1.0.0', private: true }));
      const packed = readdirSync(project).find((name) => name.endsWith('.tgz'))!;
      execFileSync(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', join(project, packed), `rxjs@${rxjsVersion}`, `@agentclientprotocol/sdk@${acpVersion}`, `zod@${zodVersion}`], { cwd: withAcp, stdio: 'pipe' });
    });

    it.each([
      ['CommonJS (require)', 'acp.cjs', "const { ToolRegistry, scriptedProvider } = require('rx-tool-loop');\nconst { serveAcp } = require('rx-tool-loop/acp');\nconst { PROTOCOL_VERSION, client, ndJsonStream } = require('@agentclientprotocol/sdk');"],
      ['ES modules (import)', 'acp.mjs', "import { ToolRegistry, scriptedProvider } from 'rx-tool-loop';\nimport { serveAcp } from 'rx-tool-loop/acp';\nimport { PROTOCOL_VERSION, client, ndJsonStream } from '@agentclientprotocol/sdk';"],
    ])('E1: serveAcp answers an editor\'s prompt from %s', (_label, file, load) => {
      writeFileSync(join(withAcp, file), acpScript(load));
      expect(execFileSync(process.execPath, [file], { cwd: withAcp, encoding: 'utf8', timeout: 60_000 })).toBe('false end_turn hi there\n');
    });

    it.each([
      ['nodenext (CommonJS consumer)', 'acp-consumer.cts'],
      ['nodenext (ESM consumer)', 'acp-consumer.mts'],
    ])('E1: type-checks a consumer of rx-tool-loop/acp, %s, without Node\'s types', (_label, file) => {
      writeFileSync(join(withAcp, file), consumerAcpTs);
      // the SDK's own declarations are its business (skipLibCheck); ours must need no Node types
      const config = { compilerOptions: { strict: true, noEmit: true, skipLibCheck: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'ES2022', lib: ['ES2022', 'DOM'], types: [] }, files: [file] };
      writeFileSync(join(withAcp, 'tsconfig.json'), JSON.stringify(config));
      const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
      let errors = '';
      try {
        execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: withAcp, encoding: 'utf8', stdio: 'pipe' });
      } catch (error) {
        errors = String((error as { stdout?: string }).stdout);
      }
      expect(errors).toBe('');
    });
  });
});
