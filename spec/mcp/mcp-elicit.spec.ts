/** M7: SEP-1034's defaults on an accepted answer, and what a tool_update shows of a request. */
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { shownElicitation, withSchemaDefaults } from '../../src/mcp/mcp-elicit.js';

const request = {
  message: 'Who?',
  requestedSchema: { type: 'object' as const, properties: { name: { type: 'string' as const, default: 'Ann' }, nick: { type: 'string' as const }, on: { type: 'boolean' as const, default: false } } },
};

describe('M7: withSchemaDefaults and shownElicitation', () => {
  it('M7: an accepted answer gets each default it leaves out, keeps its own values, and the answer given is not changed', () => {
    const given: ElicitResult = { action: 'accept', content: { name: 'Bo' } };
    expect(withSchemaDefaults(request, given)).toEqual({ action: 'accept', content: { name: 'Bo', on: false } });
    expect(given).toEqual({ action: 'accept', content: { name: 'Bo' } });
    expect(withSchemaDefaults(request, { action: 'accept' })).toEqual({ action: 'accept', content: { name: 'Ann', on: false } });
    expect(withSchemaDefaults(request, { action: 'decline' })).toEqual({ action: 'decline' });
  });

  it('M7: a form request shows its message and schema; a URL-mode one its message and URL', () => {
    expect(shownElicitation(request)).toEqual(request);
    expect(shownElicitation({ mode: 'url', message: 'Sign in', url: 'https://example.com/login', elicitationId: 'e1' })).toEqual({ message: 'Sign in', url: 'https://example.com/login' });
  });
});
