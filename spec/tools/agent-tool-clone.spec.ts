/**
 * R34 for agent tools: `agentTool` learns what it forwards from the inner loop's events alone, and hands the
 * inner event on as plain data (the progress value's `event` field), so a `map((e) => structuredClone(e))`
 * between an inner loop and `agentTool` changes nothing the outer loop emits.
 */
import { NEVER, Observable, type OperatorFunction, identity, lastValueFrom, map, of, toArray } from 'rxjs';
import { ToolRegistry, agentTool, runEventedToolLoop, scriptedProvider, toolProgress, type LoopEvent, type Tool, type ToolOutput, type ToolProgressValue } from 'rx-tool-loop';
import { answerTurn, call, only, tool, toolTurn } from '../support/events.js';

const between = <T>(clone: boolean): OperatorFunction<T, T> => (clone ? map((value: T) => structuredClone(value)) : identity);
/** The events as data: a failure's stack (R25) names the code path it ran through, which a clone stage lengthens. */
const withoutStacks = (events: readonly unknown[]): unknown => JSON.parse(JSON.stringify(events, (key, value: unknown) => (key === 'stack' ? undefined : value)));

const search = tool('search', (input: Record<string, string>) => `results for ${input.q ?? ''}`, { q: 'the query' });
const failing = tool('failing', () => {
  throw new Error('index down');
});
const hanging = tool('slow', () => NEVER);

/** A librarian (an agent tool) inside a researcher (an agent tool), each inner loop behind the clone stage or not. */
function registry(clone: boolean): ToolRegistry {
  const librarian = agentTool({
    name: 'librarian',
    description: 'finds books',
    model: 'small-model',
    agent: (_input, { signal }) =>
      runEventedToolLoop({ provider: scriptedProvider([toolTurn(call('search', { q: 'books' }, 'l1'), call('failing', {}, 'l2')), answerTurn('two books')]), registry: new ToolRegistry().register(search).register(failing), messages: [{ role: 'user', content: 'books?' }], signal }).pipe(
        between(clone),
      ),
  });
  const researcher = agentTool({
    name: 'researcher',
    description: 'researches',
    input: { question: 'what to find out' },
    agent: (input, { signal }) =>
      runEventedToolLoop({
        provider: scriptedProvider([toolTurn(call('librarian', {}, 'r1'), call('search', { q: String(input.question) }, 'r2')), answerTurn('read them')]),
        registry: new ToolRegistry().register(librarian).register(search),
        messages: [{ role: 'user', content: String(input.question) }],
        signal,
      }).pipe(between(clone)),
  });
  // an inner loop that fails (no second turn) and one cut off by the call's toolTimeoutMs
  const broken = agentTool({
    name: 'broken',
    description: 'fails',
    agent: (_input, { signal }) => runEventedToolLoop({ provider: scriptedProvider([toolTurn(call('search', { q: 'x' }, 'b1'))]), registry: new ToolRegistry().register(search), messages: [{ role: 'user', content: 'x' }], signal }).pipe(between(clone)),
  });
  const stuck = agentTool({
    name: 'stuck',
    description: 'hangs',
    agent: (_input, { signal }) => runEventedToolLoop({ provider: scriptedProvider([toolTurn(call('slow', {}, 's1'))]), registry: new ToolRegistry().register(hanging), messages: [{ role: 'user', content: 'wait' }], signal }).pipe(between(clone)),
  });
  return new ToolRegistry().register(researcher).register(broken).register(stuck);
}

const outerRun = (clone: boolean) =>
  lastValueFrom(
    runEventedToolLoop({
      provider: scriptedProvider([toolTurn(call('researcher', { question: 'which zone?' }, 'c1'), call('broken', {}, 'c2'), call('stuck', {}, 'c3')), answerTurn('done')]),
      registry: registry(clone),
      messages: [{ role: 'user', content: 'go' }],
      toolTimeoutMs: 20,
    }).pipe(toArray()),
  );

describe('R34 for agent tools: inner events cloned change nothing the agent tool emits', () => {
  it('R34, A1, A2, A3: nested two deep, an inner loop that fails and one cut off: the same tool_updates (content, details, event) and results with the inner events cloned', async () => {
    const plain = await outerRun(false);
    const cloned = await outerRun(true);
    expect(withoutStacks(cloned)).toEqual(withoutStacks(plain));
    // what they had to forward: updates of updates with the librarian's model, each result as A2 says
    const fromLibrarian = only(cloned, 'tool_update').flatMap((update) => (update.event?.type === 'tool_update' && update.event.toolName === 'librarian' ? [update.event] : []));
    expect(fromLibrarian.length).toBeGreaterThan(0);
    expect(fromLibrarian.every((update) => (update.details as { model?: string } | undefined)?.model === 'small-model')).toBe(true);
    expect(only(cloned, 'tool_result').map((result) => [result.message.toolName, result.message.isError === true])).toEqual([
      ['researcher', false],
      ['broken', true],
      ['stuck', true],
    ]);
    expect(only(cloned, 'tool_result')[0]!.message.content).toBe('read them');
  });

  it("R34, A1: the progress an agent tool's run emits carries the inner event in its plain field `event`, next to content and details", async () => {
    const inner: LoopEvent[] = [];
    const researcher = agentTool({
      name: 'researcher',
      description: 'answers',
      model: 'small-model',
      agent: () => runEventedToolLoop({ provider: scriptedProvider([answerTurn('UTC')]), registry: new ToolRegistry(), messages: [{ role: 'user', content: 'zone?' }] }).pipe(map((event) => (inner.push(event), event))),
    });
    const run = researcher.handler({}, { call: { id: 'c1', name: 'researcher', input: {} }, signal: new AbortController().signal }) as Observable<ToolProgressValue | ToolOutput>;
    const values = await lastValueFrom(run.pipe(toArray()));
    const progress = values.slice(0, -1) as ToolProgressValue[];
    expect(progress.map((value) => value.event)).toEqual(inner);
    // plain data: what a copy keeps (the progress mark aside, a symbol) is all the loop needs to forward it
    expect(progress.map((value) => ({ ...structuredClone(value) }))).toEqual(progress.map(({ content, details, event }) => ({ content, details, event })));
    expect(values.at(-1)).toMatchObject({ content: 'UTC' });
  });

  it('R34, A1: any Observable tool forwards an event through the documented field: a progress value with `event` is a tool_update with that event', async () => {
    const forwarded: LoopEvent = { type: 'turn_start', turn: 1 };
    const relay: Tool = { name: 'relay', description: 'relays', input: {}, handler: () => of({ ...toolProgress('step 1'), event: forwarded }, 'done') };
    const events = await lastValueFrom(
      runEventedToolLoop({ provider: scriptedProvider([toolTurn(call('relay', {}, 'c1')), answerTurn('ok')]), registry: new ToolRegistry().register(relay), messages: [{ role: 'user', content: 'go' }] }).pipe(toArray()),
    );
    expect(only(events, 'tool_update')).toEqual([{ type: 'tool_update', toolCallId: 'c1', toolName: 'relay', content: 'step 1', event: forwarded }]);
  });
});
