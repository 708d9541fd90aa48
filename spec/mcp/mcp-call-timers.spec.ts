/**
 * M2–M4 exactly, in virtual time: a call's deadlines (`callTimeoutMs`, `maxTotalTimeoutMs`) and a dropped
 * stream, on a client of the spec's own (McpClient is structural) whose `tools/call` never answers. Each
 * deadline fires on its frame and aborts the request's signal with MCP_CANCEL_REASON, which the SDK sends as
 * `notifications/cancelled` (the specs against real servers in faults.spec.ts see it arrive).
 */
import { type Observable, asyncScheduler, firstValueFrom, map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { Tool, ToolOutput, ToolProgressValue } from 'rx-tool-loop';
import { MCP_CANCEL_REASON, type McpClient, type McpRequestOptions, type McpToolsOptions, mcpTools } from 'rx-tool-loop/mcp';

const DAY = 24 * 3600 * 1000;

/** A client whose calls never answer; it keeps each call's request options, and the application's own onerror. */
function silentClient() {
  const requests: McpRequestOptions[] = [];
  const appErrors: string[] = [];
  const client: McpClient = {
    listTools: () => Promise.resolve({ tools: [{ name: 'work', inputSchema: { type: 'object' } }] }),
    callTool: (_params, _schema, options) => {
      requests.push(options ?? {});
      return new Promise(() => {});
    },
    setNotificationHandler: () => {},
    getServerVersion: () => ({ name: 'fake' }),
    onerror: (error) => void appErrors.push(error.message),
  };
  return { client, requests, appErrors };
}

async function toolOf(client: McpClient, options?: McpToolsOptions): Promise<Tool> {
  const [tool] = await firstValueFrom(mcpTools(client, options));
  return tool!;
}

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

/** The call as letters: u = a progress update, t = a result that timed out, the result's text otherwise. */
function callOf(tool: Tool): Observable<string> {
  const signal = new AbortController().signal;
  const call$ = tool.handler({}, { call: { id: 'c1', name: tool.name, input: {} }, signal }) as Observable<ToolOutput | ToolProgressValue>;
  return call$.pipe(map((value) => ('isError' in value && /timed out/.test(value.content) ? 't' : 'content' in value && !('isError' in value) ? 'u' : String(value.content))));
}

/** Runs `fn` at `frame` (inside `TestScheduler.run` the async scheduler is virtual). */
const at = (frame: number, fn: () => void) => void asyncScheduler.schedule(fn, frame);

/** Sends a progress notification to the latest call at each of `frames`. */
function progressAt(requests: McpRequestOptions[], frames: number[]): void {
  frames.forEach((frame, index) => at(frame, () => requests.at(-1)!.onprogress!({ progress: index + 1 })));
}

describe('mcpCall deadlines (virtual time)', () => {
  it('M2 (2): maxTotalTimeoutMs caps a silent call from its start, on its frame, and aborts with MCP_CANCEL_REASON', async () => {
    const { client, requests } = silentClient();
    const tool = await toolOf(client, { maxTotalTimeoutMs: 100 });
    scheduler().run(({ expectObservable }) => {
      expectObservable(callOf(tool)).toBe('100ms (t|)');
    });
    expect(requests[0]!.signal!.aborted).toBe(true);
    expect(requests[0]!.signal!.reason).toBe(MCP_CANCEL_REASON);
    expect(requests[0]!.maxTotalTimeout).toBeUndefined(); // the library keeps it: the SDK looks at it only on progress
  });

  it('M2 (2): maxTotalTimeoutMs counts from the start whatever the progress; each progress restarts callTimeoutMs', async () => {
    const { client, requests } = silentClient();
    const capped = await toolOf(client, { callTimeoutMs: 40, maxTotalTimeoutMs: 100 });
    scheduler().run(({ expectObservable }) => {
      progressAt(requests, [30, 60, 90]);
      expectObservable(callOf(capped)).toBe('30ms u 29ms u 29ms u 9ms (t|)');
    });
    const idle = await toolOf(client, { callTimeoutMs: 50 });
    scheduler().run(({ expectObservable }) => {
      progressAt(requests, [30, 60]);
      expectObservable(callOf(idle)).toBe('30ms u 29ms u 49ms (t|)'); // 60 + 50
    });
    expect(requests.map((request) => request.signal!.reason)).toEqual([MCP_CANCEL_REASON, MCP_CANCEL_REASON]);
  });

  it('M3 (3): a callTimeoutMs of 2^31 ms or more is a long timeout, not an instant one, and the SDK is never given more than a timer takes', async () => {
    const { client, requests } = silentClient();
    for (const ms of [2 ** 31, 2 ** 35 + 7]) {
      const tool = await toolOf(client, { callTimeoutMs: ms });
      const values: string[] = [];
      scheduler().run(({ expectObservable }) => {
        expectObservable(callOf(tool)).toBe(`${ms}ms (t|)`);
        at(ms - 1, () => values.push(requests.at(-1)!.signal!.aborted ? 'ended' : 'running'));
      });
      expect(values).toEqual(['running']);
    }
    expect(requests.every((request) => request.timeout === 2 ** 31 - 1)).toBe(true);
  });

  it('M2: maxTotalTimeoutMs has no default (decided): a call that sends progress runs on, 30 days in', async () => {
    const { client, requests } = silentClient();
    const tool = await toolOf(client);
    scheduler().run(({ expectObservable }) => {
      progressAt(requests, Array.from({ length: 30 }, (_, day) => (day + 1) * DAY));
      expectObservable(callOf(tool), `^ ${30 * DAY}ms !`).toBe(`${DAY}ms u${` ${DAY - 1}ms u`.repeat(29)}`);
    });
    expect(requests[0]).toMatchObject({ timeout: 2 ** 31 - 1, resetTimeoutOnProgress: true });
    expect(requests[0]!.maxTotalTimeout).toBeUndefined();
    expect(requests[0]!.signal!.reason).toBe(MCP_CANCEL_REASON); // unsubscribed at the end: cancelled
  });

  it('M4 (1): a dropped stream (the SDK\'s onerror) ends a running call at once with MCP SERVERNAME: MESSAGE; other errors do not; the application\'s onerror still runs', async () => {
    const { client, requests, appErrors } = silentClient();
    const own = client.onerror;
    const tool = await toolOf(client);
    scheduler().run(({ expectObservable }) => {
      at(10, () => client.onerror!(new Error('Received a progress notification for an unknown token: {}')));
      at(20, () => client.onerror!(new Error('SSE stream disconnected: TypeError: terminated')));
      expectObservable(callOf(tool)).toBe('20ms #', undefined, new Error('MCP fake: SSE stream disconnected: TypeError: terminated'));
    });
    expect(requests[0]!.signal!.reason).toBe(MCP_CANCEL_REASON); // the server, if it lives, is told
    expect(appErrors).toEqual(['Received a progress notification for an unknown token: {}', 'SSE stream disconnected: TypeError: terminated']);
    expect(client.onerror).toBe(own); // the call's hook came off
  });
});
