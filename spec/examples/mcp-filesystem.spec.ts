import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

describe('npm run mcp (examples/mcp-filesystem.ts)', () => {
  it('M6: the scripted model lists a folder and reads a file through server-filesystem', () => {
    const output = execFileSync(process.execPath, [require.resolve('ts-node/dist/bin.js'), 'examples/mcp-filesystem.ts'], { cwd: root, encoding: 'utf8' });
    const folder = /My notes are in (\S+)\./.exec(output)?.[1] ?? 'no folder';
    expect(output.split(folder).join('FOLDER')).toBe(
      [
        'mcp: Tools from an MCP server',
        '',
        '[user]',
        'What is on my shopping list? My notes are in FOLDER.',
        '',
        'message_start',
        'tool_call: list_directory {"path":"FOLDER"}',
        'message_end: toolUse',
        'tool_result: "[FILE] shopping.txt"',
        'message_start',
        'tool_call: read_text_file {"path":"FOLDER/shopping.txt"}',
        'message_end: toolUse',
        'tool_result: "milk, bread, coffee\\n"',
        'message_start',
        'text_delta: Your shopping list: milk, bread, coffee.',
        'message_end: stop',
        '',
        '[assistant]',
        'content: Your shopping list: milk, bread, coffee.',
        'stopReason: stop',
        '',
        '[state]',
        'user -> assistant -> toolResult -> assistant -> toolResult -> assistant',
        '',
      ].join('\n'),
    );
  });
});
