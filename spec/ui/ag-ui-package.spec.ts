/**
 * rx-tool-loop/ui takes only types from its optional peer @ag-ui/core: the built entry runs without it (as P18's
 * check does for rx-tool-loop/ai-sdk). The build (`npm run build`) is copied into a consumer project that holds
 * the package and rxjs, nothing else, and run from CommonJS and from ES modules.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { consumerDir } from '../support/consumer-dir';

const root = join(__dirname, '../..');
let project = '';

beforeAll(() => {
  if (!existsSync(join(root, 'dist/cjs/ui/index.js'))) throw new Error('dist/ is missing rx-tool-loop/ui: run `npm run build` first');
  project = consumerDir('rx-tool-loop-ui-');
  const installed = join(project, 'node_modules/rx-tool-loop');
  mkdirSync(installed, { recursive: true });
  cpSync(join(root, 'package.json'), join(installed, 'package.json'));
  cpSync(join(root, 'dist'), join(installed, 'dist'), { recursive: true });
  symlinkSync(join(root, 'node_modules/rxjs'), join(project, 'node_modules/rxjs'), 'dir');
});

afterAll(() => {
  if (project !== '') rmSync(project, { recursive: true, force: true });
});

const script = (load: string) => `${load}
const provider = scriptedProvider([
  [{ type: 'message_start' }, { type: 'text_delta', text: 'Hi' }, { type: 'tool_call', call: { id: 'c1', name: 'echo', input: { text: 'x' } } }, { type: 'message_end', stopReason: 'toolUse' }],
  [{ type: 'message_start' }, { type: 'text_delta', text: 'Done' }, { type: 'message_end', stopReason: 'stop' }],
]);
const registry = new ToolRegistry().register({ name: 'echo', description: 'echo', input: { text: 'what' }, handler: (input) => input.text });
const run = fromAgUiInput({ threadId: 't', runId: 'r', messages: [{ id: 'u', role: 'user', content: 'go' }], tools: [], context: [] });
const types = [];
runEventedToolLoop({ provider, registry, messages: run.messages })
  .pipe(toAgUi({ threadId: run.threadId, runId: () => run.runId }))
  .subscribe({ next: (event) => types.push(event.type), complete: () => console.log(types.join(' ')) });
`;
const expected =
  'RUN_STARTED STEP_STARTED TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END TOOL_CALL_RESULT TEXT_MESSAGE_END STEP_FINISHED ' +
  'STEP_STARTED TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END STEP_FINISHED RUN_FINISHED\n';

describe('rx-tool-loop/ui, with @ag-ui/core an optional peer of types only', () => {
  it.each([
    ['CommonJS', 'ui.cjs', "const { ToolRegistry, runEventedToolLoop, scriptedProvider } = require('rx-tool-loop');\nconst { toAgUi, fromAgUiInput } = require('rx-tool-loop/ui');"],
    ['ES modules', 'ui.mjs', "import { ToolRegistry, runEventedToolLoop, scriptedProvider } from 'rx-tool-loop';\nimport { toAgUi, fromAgUiInput } from 'rx-tool-loop/ui';"],
  ])('U1: toAgUi and fromAgUiInput run from %s without @ag-ui/core installed', (_label, file, load) => {
    expect(existsSync(join(project, 'node_modules/@ag-ui'))).toBe(false);
    writeFileSync(join(project, file), script(load));
    expect(execFileSync(process.execPath, [file], { cwd: project, encoding: 'utf8' })).toBe(expected);
  });

  it('U1: with its peers @ag-ui/core and ai beside it, a TypeScript consumer of rx-tool-loop/ui type-checks (nodenext, skipLibCheck false)', () => {
    const withPeer = join(project, 'with-ag-ui');
    mkdirSync(join(withPeer, 'node_modules/@ag-ui'), { recursive: true });
    mkdirSync(join(withPeer, 'node_modules/@types'), { recursive: true });
    writeFileSync(join(withPeer, 'package.json'), JSON.stringify({ name: 'with-ag-ui', version: '1.0.0', private: true }));
    // a copy, not a link: the package's declarations find @ag-ui/core beside it, as in an install
    cpSync(join(project, 'node_modules/rx-tool-loop'), join(withPeer, 'node_modules/rx-tool-loop'), { recursive: true });
    symlinkSync(join(root, 'node_modules/rxjs'), join(withPeer, 'node_modules/rxjs'), 'dir');
    symlinkSync(join(root, 'node_modules/@ag-ui/core'), join(withPeer, 'node_modules/@ag-ui/core'), 'dir');
    // the entry's other peer of types (toUiMessageStream's): with skipLibCheck false a consumer needs it too; its own
    // declarations import 'json-schema', whose types it leaves to its users (a devDependency of ours, as P18 says)
    symlinkSync(join(root, 'node_modules/ai'), join(withPeer, 'node_modules/ai'), 'dir');
    // writeSse takes node:http's ServerResponse
    symlinkSync(join(root, 'node_modules/@types/node'), join(withPeer, 'node_modules/@types/node'), 'dir');
    writeFileSync(join(withPeer, 'consumer.ts'), consumerTs);
    const config = {
      compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2022', 'DOM'], types: ['node'] },
      files: ['consumer.ts'],
    };
    writeFileSync(join(withPeer, 'tsconfig.json'), JSON.stringify(config));
    const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
    const checked = (() => {
      try {
        return execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: withPeer, encoding: 'utf8', stdio: 'pipe' });
      } catch (error) {
        return String((error as { stdout?: string }).stdout ?? error);
      }
    })();
    expect(checked).toBe('');
  }, 60_000);
});

const consumerTs = `import type { Message, RunAgentInput } from '@ag-ui/core';
import type { Observable } from 'rxjs';
import type { ConversationEvent } from 'rx-tool-loop';
import { fromAgUiInput, fromAgUiMessages, toAgUi, toAgUiMessages, type AgUiEvent, type AgUiRun } from 'rx-tool-loop/ui';

declare const input: RunAgentInput;
declare const events$: Observable<ConversationEvent>;
const run: AgUiRun = fromAgUiInput(input);
const out: Observable<AgUiEvent> = events$.pipe(toAgUi({ threadId: run.threadId, runId: () => run.runId }));
const messages: Message[] = toAgUiMessages(fromAgUiMessages(input.messages));
out.subscribe((event) => {
  if (event.type === 'RUN_FINISHED' && event.outcome?.type === 'interrupt') console.log(event.outcome.interrupts[0]?.toolCallId, messages.length);
});
`;
