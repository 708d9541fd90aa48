/**
 * M1 (7), M4 (1): hooks chained onto a client the adapter does not own — the application's handler runs first
 * and is never replaced; a hook that ends under another passes through and is skipped when the top one comes
 * off, so the client is left as the application set it. On the SDK's own `Client` (its handler table) and on a
 * structural client.
 */
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpClient } from 'rx-tool-loop/mcp';
import { chainHandler, chainListChanged } from '../../src/mcp/client-hooks';
import { newClient } from './support/servers';

function structural(): McpClient {
  return {
    listTools: () => Promise.resolve({ tools: [] }),
    callTool: () => Promise.resolve({}),
    setNotificationHandler: () => {},
  };
}

describe('client hooks', () => {
  it('M1 (7): onclose and onerror: the application\'s handler runs first, with the client as this; hooks come off in any order', () => {
    const client = structural();
    const heard: string[] = [];
    const own = function (this: unknown, error: Error) {
      heard.push(`app ${error.message} ${this === client}`);
    };
    client.onerror = own;
    const offA = chainHandler(client, 'onerror', (error) => heard.push(`a ${(error as Error).message}`));
    const offB = chainHandler(client, 'onerror', (error) => heard.push(`b ${(error as Error).message}`));
    client.onerror(new Error('one'));
    expect(heard.splice(0)).toEqual(['app one true', 'a one', 'b one']);
    offA(); // under b: a passes through from now on
    client.onerror(new Error('two'));
    expect(heard.splice(0)).toEqual(['app two true', 'b two']);
    offB(); // on top: the application's own handler is back, a skipped
    expect(client.onerror).toBe(own);
    const offC = chainHandler(client, 'onclose', () => heard.push('c'));
    client.onclose!();
    offC();
    expect([heard, client.onclose]).toEqual([['c'], undefined]);
  });

  it('M1 (7): list_changed on the SDK\'s Client: chained onto the application\'s handler, which is back when the hooks come off', async () => {
    const client = newClient();
    const table = (client as unknown as { _notificationHandlers: Map<string, (notification: unknown) => Promise<void>> })._notificationHandlers;
    const method = 'notifications/tools/list_changed';
    const heard: string[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard.push('app'));
    const own = table.get(method);
    const offA = chainListChanged(client, () => heard.push('a'));
    const offB = chainListChanged(client, () => heard.push('b'));
    await table.get(method)!({ method, params: {} });
    expect(heard.splice(0)).toEqual(['app', 'a', 'b']);
    offA();
    await table.get(method)!({ method, params: {} });
    expect(heard.splice(0)).toEqual(['app', 'b']);
    offB();
    expect(table.get(method)).toBe(own);

    const bare = newClient(); // no handler of the application's: none is left behind
    const off = chainListChanged(bare, () => {});
    expect(table.has(method)).toBe(true);
    off();
    expect((bare as unknown as { _notificationHandlers: Map<string, unknown> })._notificationHandlers.has(method)).toBe(false);
  });

  it('M1 (7): a structural client shows no handler to chain to: the hook is its handler while subscribed, silent after', () => {
    const installed: ((notification: unknown) => void)[] = [];
    const client: McpClient = { ...structural(), setNotificationHandler: (_schema, handler) => void installed.push(handler) };
    let heard = 0;
    const off = chainListChanged(client, () => heard++);
    installed[0]!({});
    off();
    installed[0]!({});
    expect(heard).toBe(1);
  });
});
