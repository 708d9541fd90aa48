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
});
