/**
 * T9: recorded tests pass as generated. Each run below is recorded inside `TestScheduler.run`, its generated
 * test compiled from its source and run (spec/testing/support/replay.ts): it must pass, and it must rebuild
 * what the run did (a hook's answers, the prompts, the abort) rather than expect something else.
 */
import { NEVER, Observable, OperatorFunction, concat, concatMap, delay, lastValueFrom, map, merge, of, take, takeUntil, throwError, timer } from 'rxjs';
import type { RunHelpers } from 'rxjs/testing';
import { z } from 'zod';
import { TokenBudget, ToolRegistry, agentTool, conversation, defineTool, runEventedToolLoop, type AgentMessage, type LoopEvent, type ProviderEvent } from 'rx-tool-loop';
import { call, end, marbleProvider, marbleTools, recordMarbles, start, text } from 'rx-tool-loop/testing';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { recorded, replay as run } from './support/replay.js';

/** Every test generated here: run at once, type-checked together at the end. */
const generated: string[] = [];
const replay = (test: string) => {
  generated.push(test);
  run(test);
};

const events = {
  s: start,
  a: call('search', { q: 'rx' }, 'c1'),
  b: call('fetch', { url: 'x' }, 'c2'),
  u: end('toolUse'),
  t: text('Done.'),
  e: end('stop'),
};
const user: AgentMessage[] = [{ role: 'user', content: 'go' }];
const twoTurns = ({ cold }: RunHelpers, first = '-s-a-b-u|', second = '-s-t-e|') => marbleProvider(cold(first, events), cold(second, events));

describe('recorded tests pass as generated (T9)', () => {
  it('T9: a denied call replays through a beforeToolCall that denies it at the recorded frame', () => {
    const { test, diagram } = recorded((helpers) =>
      runEventedToolLoop({
        provider: twoTurns(helpers),
        registry: marbleTools({ search: () => throwError(() => new Error('ran')), fetch: 'page' }),
        messages: user,
        beforeToolCall: (c) => (c.name === 'search' ? helpers.cold('---(d|)', { d: { action: 'deny', reason: 'not now' } as const }) : undefined),
      }),
    );
    expect(diagram).toBe('1s-c-(aαR)Ae(E2)stu(FL|)');
    // frame 6, in a replay 5 times slower: the run's events are closer than marble syntax draws
    expect(test).toContain('"c1": [{ at: 30, decision: {"action":"deny","reason":"not now"} }]');
    replay(test);
  });

  it('T9: an answered call (a cache) and an edited input replay as recorded', () => {
    const { test } = recorded((helpers) =>
      runEventedToolLoop({
        provider: twoTurns(helpers),
        registry: marbleTools({ search: helpers.cold('--(R|)', { R: 'hits' }), fetch: (input) => `got ${String(input['url'])}` }),
        messages: user,
        beforeToolCall: (c) =>
          c.name === 'fetch' ? { action: 'run', input: { url: 'https://example.com' } } : helpers.cold('-(d|)', { d: { action: 'answer', output: 'cached hits' } as const }),
      }),
    );
    expect(test).toContain('"decision": {"action":"run","input":{"url":"https://example.com"}}'.replace('"decision": ', 'decision: '));
    expect(test).toContain('{"action":"answer","output":"cached hits"}');
    replay(test);
  });

  it('T9: a schema tool\'s validation error and a missing input (R9) replay without stand-in tools answering undefined', () => {
    const registry = new ToolRegistry()
      .register(defineTool({ name: 'search', description: 'search', schema: z.object({ q: z.number() }), handler: ({ q }) => String(q) }))
      .register({ name: 'fetch', description: 'fetch', input: { path: 'the path' }, handler: () => 'page' });
    const { test } = recorded((helpers) => runEventedToolLoop({ provider: twoTurns(helpers), registry, messages: user }));
    expect(test).toContain('error: missing input: path');
    expect(test).toContain('error: invalid input: q:');
    replay(test);
  });

  it('T9: an approval that arrives later (a hook that waits) replays with the tool started at the recorded frame', () => {
    const { test } = recorded((helpers) =>
      runEventedToolLoop({
        provider: twoTurns(helpers, '-s-a-----u|'),
        registry: marbleTools({ search: helpers.cold('--(R|)', { R: 'hits' }) }),
        messages: user,
        beforeToolCall: () => timer(5).pipe(map(() => undefined)),
      }),
    );
    expect(test).toContain('"c1": [{ at: 40 }]'); // frame 8, 5 times slower
    replay(test);
  });

  it('T9, H8: calls that waited for a person (tool_approval) replay through approvals: one approved later, one denied, one on an input beforeToolCall rewrote', () => {
    const three = { ...events, c: call('search', { q: 'more' }, 'c3') };
    const { test } = recorded((helpers) =>
      runEventedToolLoop({
        provider: marbleProvider(helpers.cold('-s-a-----b-----c-u|', three), helpers.cold('-s-t-e|', events)),
        registry: marbleTools({ search: helpers.cold('--(R|)', { R: 'hits' }), fetch: 'page' }),
        messages: user,
        beforeToolCall: (c) => (c.id === 'c3' ? { action: 'run', input: { q: 'rewritten' } } : undefined),
        approvals: {
          needsApproval: () => true,
          decisions: helpers.hot('-----------a-----b-----------c', {
            a: { toolCallId: 'c1', decision: true },
            b: { toolCallId: 'c2', decision: false },
            c: { toolCallId: 'c3', decision: { action: 'run', input: { q: 'approved' } } },
          }),
        },
      }),
    );
    expect(test).toContain('approvals');
    expect(test).toContain('decision: false');
    expect(test).toContain('decision: {"action":"run","input":{"q":"approved"}}');
    replay(test);
  });

  it('T9, H8: a call still waiting for a person when the signal aborts replays waiting, and is aborted at the recorded frame', () => {
    const { test, values } = recorded((helpers) => {
      const controller = new AbortController();
      timer(9).subscribe(() => controller.abort());
      return runEventedToolLoop({
        provider: twoTurns(helpers, '-s-a-u|'),
        registry: marbleTools({ search: 'hits' }),
        messages: user,
        signal: controller.signal,
        approvals: { needsApproval: () => true, decisions: NEVER },
      });
    });
    expect(Object.values(values)).toContain('tool_result search: error: aborted (isError)');
    replay(test);
  });

  it.each([
    ['sequential mode', { toolExecution: 'sequential' as const }],
    ['maxConcurrency 1', { maxConcurrency: 1 }],
  ])('T9: %s replays, with or without the options given to recordMarbles', (_, extra) => {
    const body = (helpers: RunHelpers) =>
      runEventedToolLoop({
        provider: twoTurns(helpers),
        registry: marbleTools({ search: helpers.cold('----(R|)', { R: 'hits' }), fetch: helpers.cold('--(F|)', { F: 'page' }) }),
        messages: user,
        ...extra,
      });
    const blind = recorded(body);
    replay(blind.test);
    const told = recorded(body, { options: extra });
    expect(told.test).toContain(Object.entries(extra).map(([k, v]) => `${k}: ${JSON.stringify(v)}`)[0]);
    replay(told.test);
  });

  it('T9: tools that terminate the loop in turn 2 replay terminating in turn 2, not in turn 1', () => {
    const { test, values } = recorded((helpers) =>
      runEventedToolLoop({
        provider: marbleProvider(helpers.cold('-s-a-u|', events), helpers.cold('-s-b-u|', events)),
        registry: marbleTools({ search: 'hits', fetch: { content: 'saved', terminate: true } }),
        messages: user,
      }),
    );
    expect(Object.values(values)).toContain('loop_end terminated');
    expect(Object.values(values).filter((v) => v.startsWith('turn_end 2'))).toHaveLength(1);
    replay(test);
  });

  it('L3, T9: a run its budget ended replays on a budget of what it spent, an inner agent\'s calls included', () => {
    const spend = (inputTokens: number) => ({ usage: { inputTokens, outputTokens: 0 } });
    const outer = { s: start, r: call('researcher', {}, 'r1'), u: end('toolUse', spend(10)) };
    const inner = { s: start, t: text('found'), e: end('stop', spend(45)) };
    const { test, values } = recorded(({ cold }) => {
      const researcher = agentTool({
        name: 'researcher',
        description: 'Researches',
        agent: (_input, context) =>
          runEventedToolLoop({ provider: marbleProvider(cold('-s-t-e|', inner)), registry: new ToolRegistry(), messages: user, signal: context.signal, budget: context.budget }),
      });
      return runEventedToolLoop({
        provider: marbleProvider(cold('-s-r---u|', outer), cold('-s-r---u|', outer)),
        registry: new ToolRegistry().register(researcher),
        messages: user,
        budget: new TokenBudget(50),
      });
    });
    expect(Object.values(values)).toContain('loop_end budget');
    expect(test).toContain('budget: new TokenBudget(55)');
    replay(test);
  });

  it('T9: two synchronous results in one frame replay in the recorded order', () => {
    const both: ProviderEvent[] = [start, events.a, events.b, end('toolUse')];
    const { test, diagram } = recorded((helpers) =>
      runEventedToolLoop({
        provider: marbleProvider(helpers.cold('-(sabu|)', { s: both[0]!, a: both[1]!, b: both[2]!, u: both[3]! }), helpers.cold('-s-t-e|', events)),
        registry: marbleTools({ search: 'hits', fetch: () => of('page') }),
        messages: user,
      }),
    );
    expect(diagram).toBe('1(scγRaαAeE2)stu(FL|)');
    expect(test).toContain('"search": nthRun([of("hits")])');
    replay(test);
  });

  it('T9: an output cut by maxToolOutputChars replays (the recorded cut is the result), and the test says so', () => {
    const options = { maxToolOutputChars: 5 };
    const { test } = recorded(
      (helpers) => runEventedToolLoop({ provider: twoTurns(helpers), registry: marbleTools({ search: 'a long list of hits', fetch: helpers.cold('-(F|)', { F: 'the whole page' }) }), messages: user, ...options }),
      { options },
    );
    expect(test).toContain('the w\\n[truncated: 9 more characters]');
    expect(test).toContain('// Note: maxToolOutputChars: 5 is left out');
    replay(test);
  });

  it('T9: a run aborted after message_end, before the provider completed, replays with its abort at the recorded frame', () => {
    const { test, values } = recorded((helpers) => {
      const controller = new AbortController();
      timer(9).subscribe(() => controller.abort());
      return runEventedToolLoop({ provider: twoTurns(helpers, '-s-a-u--------|'), registry: marbleTools({ search: helpers.cold('--(R|)', { R: 'hits' }) }), messages: user, signal: controller.signal });
    });
    expect(Object.values(values)).toContain('loop_end aborted');
    expect(test).toContain('timer(45).subscribe(() => controller.abort());'); // frame 9, 5 times slower
    replay(test);
  });

  it('T9: the options the events do not show (maxTurns) are taken and passed on', () => {
    const options = { maxTurns: 1 };
    const { test } = recorded((helpers) => runEventedToolLoop({ provider: twoTurns(helpers), registry: marbleTools({ search: 'hits', fetch: 'page' }), messages: user, ...options }), { options });
    expect(test).toContain('maxTurns: 1');
    replay(test);
  });

  it.each(['queue', 'switch', 'steer'] as const)('T9: a conversation under %s replays through conversation() with its prompts as a marble', (policy) => {
    const { test } = recorded((helpers) =>
      helpers.cold('a---b|', { a: 'first', b: 'second' }).pipe(
        conversation({
          provider: marbleProvider(helpers.cold('-s-a---u|', events), helpers.cold('-s-t-e|', events), helpers.cold('-s-t-e|', events), helpers.cold('-s-t-e|', events)),
          registry: marbleTools({ search: helpers.cold('---(R|)', { R: 'hits' }) }),
          policy,
        }),
      ),
    );
    expect(test.match(/^ {2}turn1:/gm)).toHaveLength(1);
    expect(test).toContain(`policy: "${policy}"`);
    expect(test).toContain('cold(diagram.prompts, prompts).pipe(conversation(');
    replay(test);
  });

  it('T9: a provider that breaks the event order (R10) replays: its line fails with the recorded error', () => {
    const { test } = recorded(() =>
      runEventedToolLoop({ provider: () => of<ProviderEvent[]>(start, text('a'), end('stop'), text('late')).pipe(delay(1)), registry: marbleTools({}), messages: user }),
    );
    expect(test).toContain('cold(diagram.turn1, events, new ProviderProtocolError("provider sent text_delta after message_end"))');
    replay(test);
  });

  it.each([
    ['takeUntil, between two events', (stop: Observable<unknown>) => takeUntil(stop)],
    ['take, at an event', () => take(4)],
  ])('T9: a run cut short (%s) replays cut where it stopped', (_, cut) => {
    const { test } = recorded(({ cold }) =>
      runEventedToolLoop({ provider: twoTurns({ cold } as RunHelpers, '-s-a-----u|'), registry: marbleTools({ search: cold('--------(R|)', { R: 'hits' }) }), messages: user }).pipe(
        cut(cold('-------x')) as OperatorFunction<LoopEvent, LoopEvent>,
      ),
    );
    expect(test).toMatch(/run\.pipe\((takeUntil\(timer\(7\)\)|take\(4\)), described\)/);
    replay(test);
  });

  /** A researcher agent tool over `inner` turns, with a search tool; nested under `name`. */
  const researcher = (helpers: RunHelpers, turns: string[], name = 'researcher', registry = marbleTools({ search: helpers.cold('---(r|)', { r: '3 papers' }) })) => {
    const inner = { s: start, c: call('search', { q: 'coffee' }), u: end('toolUse'), t: text('Mostly yes.'), e: end('stop') };
    const model = marbleProvider(...turns.map((turn) => helpers.cold(turn, inner)));
    return agentTool({
      name,
      description: 'researches',
      input: {},
      agent: (_input, context) => runEventedToolLoop({ provider: model, registry, messages: [{ role: 'user', content: 'coffee?' }], signal: context.signal }),
    });
  };
  const outer = { s: start, a: call('researcher', {}, 'r1'), m: call('middle', {}, 'm1'), t: text('On it.'), u: end('toolUse'), e: end('stop') };

  it('A4: an agent tool\'s inner loop is recorded as the tool\'s own line, and the generated test replays it through agentTool', () => {
    const { test, diagram } = recorded((helpers) =>
      runEventedToolLoop({
        provider: marbleProvider(helpers.cold('-s-a--t----u|', outer), helpers.cold('-s-t-e|', outer)),
        registry: new ToolRegistry().register(researcher(helpers, ['-----s-c-u|', '-s-t-e|'])),
        messages: user,
      }),
    );
    expect(diagram).toMatch(/^1s-\(...\)/); // tool_call, tool_start and the inner turn_start: one frame
    expect(test).toContain('.register(agentTool({ name: "researcher"');
    expect(test).toMatch(/researcher1: +'   /); // the inner loop's line, drawn from the call's tool_start at frame 3
    replay(test);
  });

  it('T9: a prompt that abort$ dropped replays: the prompts\' line sends it right before the press, which drops it again', () => {
    const { test, diagram, values } = recorded(({ cold, hot }) =>
      cold('a-b--|', { a: 'first', b: 'second' }).pipe(conversation({ provider: marbleProvider(cold('-s-t', events)), registry: marbleTools({}), abort$: hot('----x') })),
    );
    expect(diagram).toBe('(U1)st(XEL)|');
    expect(values['X']).toBe('prompt_dropped second');
    expect(test).toContain("const prompts = { a: \"first\", b: \"second\", \"*\": null }; // *: a press of abort$");
    replay(test);
  });

  it('T9: under switch, a prompt that came while nothing ran and joined after a loop ended normally replays after that end', async () => {
    // real time, one frame of 500 ms: the model answers at 5 ms; the second prompt comes at 15 ms, when no loop runs, and joins
    // on switch's 0 ms timer, in a go of its own right after the first loop's end
    const { test, values } = await lastValueFrom(
      recordMarbles(
        merge(of('first'), timer(15).pipe(map(() => 'second'))).pipe(
          conversation({ provider: () => timer(5).pipe(concatMap(() => of(start, text('ok'), end('stop')))), registry: marbleTools({}), policy: 'switch' }),
        ),
        { frameMs: 500, options: { policy: 'switch' } },
      ),
    );
    expect(Object.values(values).filter((line) => line === 'loop_end stop')).toHaveLength(1); // both loops end so, one letter
    expect(Object.values(values)).toContain('user_message second');
    run(test);
  });

  it('T9 (2): an inner loop whose first events come in the go of its start replays them there, before the outer model\'s event of that frame', () => {
    const { test, diagram, values } = recorded((helpers) =>
      runEventedToolLoop({
        // the call and the message_end in one frame; the inner model answers its message_start at once
        provider: marbleProvider(helpers.cold('-s-(au|)', outer), helpers.cold('-s-t-e|', outer)),
        registry: new ToolRegistry().register(
          agentTool({
            name: 'researcher',
            description: 'researches',
            input: {},
            agent: () => runEventedToolLoop({ provider: () => concat(of(start), helpers.cold('--t-e|', { t: text('Yes.'), e: end('stop') })), registry: marbleTools({}), messages: [{ role: 'user', content: 'coffee?' }] }),
          }),
        ),
        messages: user,
      }),
    );
    const order = [...diagram.slice(diagram.indexOf('('), diagram.indexOf(')'))].map((letter) => values[letter]);
    expect(order.slice(1)).toEqual(['tool_call researcher', 'tool_start researcher', 'tool_update researcher: turn_start 1', 'tool_update researcher: message_start', 'message_end toolUse']);
    replay(test);
  });

  it('A4: agent tools nested two deep, and an inner loop that runs in one go, replay as recorded', () => {
    const { test } = recorded((helpers) => {
      const leaf = researcher(helpers, ['(ste|)'], 'researcher', marbleTools({}));
      const middle = agentTool({
        name: 'middle',
        description: 'delegates',
        input: {},
        agent: () =>
          runEventedToolLoop({
            provider: marbleProvider(helpers.cold('-s-a-u|', outer), helpers.cold('-s-t-e|', outer)),
            registry: new ToolRegistry().register(leaf),
            messages: user,
          }),
      });
      return runEventedToolLoop({ provider: marbleProvider(helpers.cold('-s-m-u|', outer), helpers.cold('-s-e|', outer)), registry: new ToolRegistry().register(middle), messages: user });
    });
    expect(test).toContain('.register(agentTool({ name: "middle"');
    expect(test).toContain('tool_update middle: tool_update researcher: text_delta Mostly yes.');
    replay(test);
  });

  it('A4: an agent tool torn down by the outer signal replays: its inner line never completes', () => {
    const { test } = recorded((helpers) => {
      const controller = new AbortController();
      timer(9).subscribe(() => controller.abort());
      return runEventedToolLoop({
        provider: marbleProvider(helpers.cold('-s-a-u|', outer), helpers.cold('-s-e|', outer)),
        registry: new ToolRegistry().register(researcher(helpers, ['-----s-c-u|'], 'researcher', marbleTools({ search: helpers.cold('------(r|)', { r: 'late' }) }))),
        messages: user,
        signal: controller.signal,
      });
    });
    expect(test).toContain('tool_result researcher: error: aborted (isError)');
    replay(test);
  });

  it('T9: every test generated above compiles as it is: strict TypeScript, no unused names, the published types', () => {
    expect(generated.length).toBeGreaterThanOrEqual(15);
    const root = join(__dirname, '..', '..');
    const folder = mkdtempSync(join(__dirname, 'generated-'));
    try {
      const files = generated.map((test, i) => {
        const file = join(folder, `recorded-${i}.spec.ts`);
        writeFileSync(file, test);
        return file;
      });
      const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), { noEmit: true }, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!;
      const program = ts.createProgram(files, { ...config.options, noUnusedLocals: true, noUnusedParameters: true });
      const problems = ts.getPreEmitDiagnostics(program).map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
      expect(problems).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);
});
