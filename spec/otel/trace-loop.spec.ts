/** O1–O3: traceLoop's spans, read back from sdk-trace-base's in-memory exporter. */
import { type Span, type Tracer, DiagLogLevel, SpanKind, SpanStatusCode, context, diag, trace } from '@opentelemetry/api';
import { AlwaysOffSampler, BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { NEVER, Observable, Subject, from, last, lastValueFrom, map, of, take, takeWhile, toArray } from 'rxjs';
import { type ApprovalAnswer, TokenBudget, ToolRegistry, agentTool, conversation, runEventedToolLoop, scriptedProvider, type ConversationEvent, type LoopEvent, type ProviderEvent, type ProviderInput, type Tool } from 'rx-tool-loop';
import { toolSpanContext, traceLoop } from 'rx-tool-loop/otel';
import { answerTurn, call, end, only, start, text, tool, toolTurn } from '../support/events.js';
import { StackContextManager, memoryTracer, parentOf, spanNamed } from './memory-tracer.js';
import { hostileTracer } from './hostile-tracer.js';

const clock = tool('current_time', () => '2026-01-01T00:00:00Z');
const s04Script = () =>
  scriptedProvider([
    toolTurn(call('current_time', {}, 'call_1')),
    (input: ProviderInput) => [start, text(`It is ${String(input.messages[2]?.content)}`), end('stop')],
  ]);
const question = [{ role: 'user' as const, content: 'What time is it?' }];

function s04(through: (events: Observable<LoopEvent>) => Observable<LoopEvent> = (events) => events): Promise<LoopEvent[]> {
  const loop = runEventedToolLoop({ provider: s04Script(), registry: new ToolRegistry().register(clock), messages: question });
  return lastValueFrom(through(loop).pipe(toArray()));
}

describe('traceLoop (rx-tool-loop/otel)', () => {
  it('O1: passes every event of an s04 run through unchanged, and records invoke_agent with a chat span per provider call and an execute_tool span per call, children of it', async () => {
    const memory = memoryTracer();
    const traced = await s04((events) => events.pipe(traceLoop({ tracer: memory.tracer, agentName: 's04', model: 'scripted' })));
    expect(traced).toEqual(await s04());
    expect(memory.tree()).toEqual([
      'invoke_agent s04 (INTERNAL)',
      '  chat scripted (CLIENT)',
      '  execute_tool current_time (INTERNAL)',
      '  chat scripted (CLIENT)',
    ]);
    expect(memory.ends().every((span) => span.ends === 1)).toBe(true);
    const spans = memory.finished();
    // ended as their events went by: the tool within the first reply, the agent last
    expect(spans.map((span) => span.name)).toEqual(['execute_tool current_time', 'chat scripted', 'chat scripted', 'invoke_agent s04']);
    const agent = spanNamed(spans, 'invoke_agent s04');
    expect(agent.parentSpanContext).toBeUndefined();
    for (const span of spans.filter((s) => s !== agent)) {
      expect(parentOf(spans, span)).toBe(agent);
      expect(span.spanContext().traceId).toBe(agent.spanContext().traceId);
    }
  });

  it('O2: the s04 spans carry the GenAI attributes: operation, agent, model, finish reasons, usage, tool name and call id; statuses unset', async () => {
    const memory = memoryTracer();
    await s04((events) => events.pipe(traceLoop({ tracer: memory.tracer, agentName: 's04', model: 'scripted' })));
    const spans = memory.finished();
    expect(spanNamed(spans, 'invoke_agent s04').attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 's04',
      'gen_ai.request.model': 'scripted',
      'rx_tool_loop.reason': 'stop',
      'gen_ai.usage.input_tokens': 0,
      'gen_ai.usage.output_tokens': 0,
    });
    expect(spanNamed(spans, 'chat scripted', 0).attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'scripted',
      'rx_tool_loop.turn': 1,
      'gen_ai.response.finish_reasons': ['toolUse'],
    });
    expect(spanNamed(spans, 'chat scripted', 1).attributes).toMatchObject({ 'rx_tool_loop.turn': 2, 'gen_ai.response.finish_reasons': ['stop'] });
    expect(spanNamed(spans, 'execute_tool current_time').attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'current_time',
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.type': 'function',
    });
    expect(spans.map((span) => span.kind)).toEqual([SpanKind.INTERNAL, SpanKind.CLIENT, SpanKind.CLIENT, SpanKind.INTERNAL]);
    expect(spans.every((span) => span.status.code === SpanStatusCode.UNSET)).toBe(true);
    expect(spans.every((span) => span.events.length === 0)).toBe(true); // recordContent is off by default
  });

  it('O1 (decided): without agentName and model the spans are named invoke_agent and chat, without those attributes', async () => {
    const memory = memoryTracer();
    await s04((events) => events.pipe(traceLoop({ tracer: memory.tracer })));
    expect(memory.tree()).toEqual(['invoke_agent (INTERNAL)', '  chat (CLIENT)', '  execute_tool current_time (INTERNAL)', '  chat (CLIENT)']);
    for (const span of memory.finished()) {
      expect(span.attributes['gen_ai.agent.name']).toBeUndefined();
      expect(span.attributes['gen_ai.request.model']).toBeUndefined();
    }
  });

  it("O2, R27: a chat span carries its message_end's usage; invoke_agent the loop's totals", async () => {
    const memory = memoryTracer();
    const provider = scriptedProvider([
      [start, call('current_time', {}, 'c1'), end('toolUse', { usage: { inputTokens: 10, outputTokens: 3, cacheReadTokens: 4 } })],
      [start, text('noon'), end('stop', { usage: { inputTokens: 20, outputTokens: 5 } })],
    ]);
    await lastValueFrom(runEventedToolLoop({ provider, registry: new ToolRegistry().register(clock), messages: question }).pipe(traceLoop({ tracer: memory.tracer })));
    const spans = memory.finished();
    expect(spanNamed(spans, 'chat', 0).attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.output_tokens': 3, 'gen_ai.usage.cache_read.input_tokens': 4 });
    expect(spanNamed(spans, 'chat', 1).attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 20, 'gen_ai.usage.output_tokens': 5 });
    expect(spanNamed(spans, 'invoke_agent').attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 30, 'gen_ai.usage.output_tokens': 8 });
  });

  it('O2: a failing tool sets its execute_tool span to ERROR with the result text; the loop and the replies stay unset', async () => {
    const memory = memoryTracer();
    const failing = tool('current_time', () => {
      throw new Error('clock is broken');
    });
    const provider = scriptedProvider([toolTurn(call('current_time', {}, 'c1')), answerTurn('I cannot tell.')]);
    await lastValueFrom(runEventedToolLoop({ provider, registry: new ToolRegistry().register(failing), messages: question }).pipe(traceLoop({ tracer: memory.tracer, agentName: 'clock' })));
    expect(memory.tree()).toEqual([
      'invoke_agent clock (INTERNAL)',
      '  chat (CLIENT)',
      '  execute_tool current_time (INTERNAL) [ERROR: error: clock is broken]',
      '  chat (CLIENT)',
    ]);
  });

  it('O2: a provider that errors sets its chat span and the loop\'s invoke_agent span to ERROR with the message (no message_end: the turn_end ends the chat span)', async () => {
    const memory = memoryTracer();
    const provider = scriptedProvider([toolTurn(call('current_time', {}, 'c1'))]); // no second turn: the provider errors
    const events = await lastValueFrom(
      runEventedToolLoop({ provider, registry: new ToolRegistry().register(clock), messages: question }).pipe(traceLoop({ tracer: memory.tracer }), toArray()),
    );
    expect(only(events, 'message_end')).toHaveLength(1);
    const message = 'provider error: scripted provider: no turn 2 (the script has 1)';
    expect(memory.tree()).toEqual([
      `invoke_agent (INTERNAL) [ERROR: ${message}]`,
      '  chat (CLIENT)',
      '  execute_tool current_time (INTERNAL)',
      `  chat (CLIENT) [ERROR: ${message}]`,
    ]);
    expect(spanNamed(memory.finished(), 'chat', 1).attributes['gen_ai.response.finish_reasons']).toEqual(['error']);
    expect(spanNamed(memory.finished(), 'invoke_agent').attributes['rx_tool_loop.reason']).toBe('error');
  });

  it('O2: a reply that ends with stop reason error (P7) sets its chat span to ERROR with the errorMessage', async () => {
    const memory = memoryTracer();
    const provider = scriptedProvider([[start, end('error', { errorMessage: 'overloaded' })]]);
    await lastValueFrom(runEventedToolLoop({ provider, registry: new ToolRegistry(), messages: question }).pipe(traceLoop({ tracer: memory.tracer })));
    expect(memory.tree()).toEqual(['invoke_agent (INTERNAL) [ERROR: overloaded]', '  chat (CLIENT) [ERROR: overloaded]']);
  });

  it('L1, L3: the model that answered (message_end.model, withFallback) is the chat span\'s gen_ai.response.model; a loop its budget ended says so, unfailed', async () => {
    const memory = memoryTracer();
    const asks: ProviderEvent[] = [
      start,
      { type: 'tool_call', call: { id: 'c1', name: 'current_time', input: {} } },
      { type: 'message_end', stopReason: 'toolUse', model: 'gpt-backup', usage: { inputTokens: 5, outputTokens: 5 } },
    ];
    const looped = runEventedToolLoop({ provider: scriptedProvider([asks]), registry: new ToolRegistry().register(clock), messages: question, budget: new TokenBudget(10) });
    await lastValueFrom(looped.pipe(traceLoop({ tracer: memory.tracer })));
    const spans = memory.finished();
    expect(spanNamed(spans, 'chat').attributes['gen_ai.response.model']).toBe('gpt-backup');
    const agent = spanNamed(spans, 'invoke_agent');
    expect(agent.attributes['rx_tool_loop.reason']).toBe('budget');
    expect(agent.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('O1 (decided), R23: a call that never started (unknown tool, invalid input, duplicate id) gets an execute_tool span of zero length at its tool_result, marked not started, with status ERROR', async () => {
    const memory = memoryTracer();
    const needs = tool('needs', (input: Record<string, string>) => input.city ?? '', { city: 'the city' });
    const provider = scriptedProvider([
      toolTurn(call('nope', {}, 'c1'), call('needs', {}, 'c2'), call('needs', { city: 'Paris' }, 'c3'), call('needs', { city: 'Rome' }, 'c3')),
      answerTurn('done'),
    ]);
    await lastValueFrom(runEventedToolLoop({ provider, registry: new ToolRegistry().register(needs), messages: question }).pipe(traceLoop({ tracer: memory.tracer })));
    const tools = memory.finished().filter((span) => span.name.startsWith('execute_tool'));
    expect(tools.map((span) => [span.name, span.attributes['gen_ai.tool.call.id'], span.attributes['rx_tool_loop.tool.started'], span.status.message])).toEqual([
      ['execute_tool nope', 'c1', false, 'unknown tool: nope'],
      ['execute_tool needs', 'c2', false, 'error: missing input: city'],
      ['execute_tool needs', 'c3', undefined, undefined],
      ['execute_tool needs', 'c3_dup2', false, 'error: duplicate tool call id: c3'],
    ]);
    const unstarted = tools.filter((span) => span.attributes['rx_tool_loop.tool.started'] === false);
    expect(unstarted).toHaveLength(3);
    for (const span of unstarted) {
      expect(span.endTime).toEqual(span.startTime);
      expect(span.status.code).toBe(SpanStatusCode.ERROR);
    }
    expect(memory.ends().every((span) => span.ends === 1)).toBe(true);
  });

  it('O1 (decided), H2: a denied call gets the zero-length span with status ERROR and the denial; one let run gets the span from its tool_start', async () => {
    const memory = memoryTracer();
    const provider = scriptedProvider([toolTurn(call('current_time', {}, 'c1'), call('current_time', {}, 'c2')), answerTurn('done')]);
    const loop = runEventedToolLoop({
      provider,
      registry: new ToolRegistry().register(clock),
      messages: question,
      beforeToolCall: (c) => (c.id === 'c1' ? { action: 'deny', reason: 'not now' } : undefined),
    });
    await lastValueFrom(loop.pipe(traceLoop({ tracer: memory.tracer })));
    const tools = memory.finished().filter((span) => span.name.startsWith('execute_tool'));
    expect(tools.map((span) => [span.attributes['gen_ai.tool.call.id'], span.attributes['rx_tool_loop.tool.started'], span.status.message])).toEqual([
      ['c1', false, 'denied: not now'],
      ['c2', undefined, undefined],
    ]);
    expect(tools.map((span) => span.status.code)).toEqual([SpanStatusCode.ERROR, SpanStatusCode.UNSET]);
    expect(tools[0]!.endTime).toEqual(tools[0]!.startTime);
  });

  it('O1, H8: a call that waits for a person is an event on the loop\'s span at its tool_approval; its execute_tool span starts when it runs', () => {
    const memory = memoryTracer();
    const decisions = new Subject<ApprovalAnswer>();
    runEventedToolLoop({
      provider: scriptedProvider([toolTurn(call('current_time', {}, 'c1')), answerTurn('done')]),
      registry: new ToolRegistry().register(clock),
      messages: question,
      approvals: { needsApproval: () => true, decisions },
    })
      .pipe(traceLoop({ tracer: memory.tracer }))
      .subscribe();
    // it waits: the loop's and the chat's spans are open, the call has none yet
    expect(memory.ends().map((span) => span.name)).toEqual(['invoke_agent', 'chat']);
    decisions.next({ toolCallId: 'c1', decision: true });
    const spans = memory.finished();
    const agent = spanNamed(spans, 'invoke_agent');
    expect(agent.events.map((event) => [event.name, event.attributes])).toEqual([
      ['rx_tool_loop.tool_approval', { 'gen_ai.tool.name': 'current_time', 'gen_ai.tool.call.id': 'c1' }],
    ]);
    const tool = spanNamed(spans, 'execute_tool current_time');
    expect(tool.attributes['rx_tool_loop.tool.started']).toBeUndefined();
    expect(tool.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('O2 (revised): recordContent records the content as the conventions\' attributes, not as span events: each provider call\'s input and output messages, each call\'s arguments and result, the loop\'s input and last output', async () => {
    const memory = memoryTracer();
    const prompts = of('What time is it?');
    await lastValueFrom(prompts.pipe(conversation({ provider: s04Script(), registry: new ToolRegistry().register(clock) }), traceLoop({ tracer: memory.tracer, recordContent: true })));
    const spans = memory.finished();
    expect(spans.every((span) => span.events.length === 0)).toBe(true);
    const user = { role: 'user', parts: [{ type: 'text', content: 'What time is it?' }] };
    const asks = { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'current_time', arguments: {} }] };
    const result = { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: '2026-01-01T00:00:00Z' }] };
    const answer = { role: 'assistant', parts: [{ type: 'text', content: 'It is 2026-01-01T00:00:00Z' }] };
    const content = (span: (typeof spans)[number]) => ({
      input: parsed(span.attributes['gen_ai.input.messages']),
      output: parsed(span.attributes['gen_ai.output.messages']),
      system: span.attributes['gen_ai.system_instructions'],
    });
    expect(content(spanNamed(spans, 'chat', 0))).toEqual({ input: [user], output: [{ ...asks, finish_reason: 'toolUse' }], system: undefined });
    expect(content(spanNamed(spans, 'chat', 1))).toEqual({ input: [user, asks, result], output: [{ ...answer, finish_reason: 'stop' }], system: undefined });
    expect(content(spanNamed(spans, 'invoke_agent'))).toEqual({ input: [user], output: [{ ...answer, finish_reason: 'stop' }], system: undefined });
    const toolSpan = spanNamed(spans, 'execute_tool current_time');
    expect([toolSpan.attributes['gen_ai.tool.call.arguments'], toolSpan.attributes['gen_ai.tool.call.result']]).toEqual(['{}', '2026-01-01T00:00:00Z']);
  });

  it('O2 (revised): in a lone loop the first provider call\'s input is not told yet (none recorded), the next ones\' are; system messages are the system instructions; the loop\'s input is its history as it began; an error result is no tool result', async () => {
    const memory = memoryTracer();
    const failing = tool('current_time', () => {
      throw new Error('no clock');
    });
    const provider = scriptedProvider([toolTurn(call('current_time', { zone: 'UTC' }, 'call_1')), answerTurn('I cannot tell.')]);
    const messages = [{ role: 'system' as const, content: 'Be brief.' }, ...question];
    await lastValueFrom(runEventedToolLoop({ provider, registry: new ToolRegistry().register(failing), messages }).pipe(traceLoop({ tracer: memory.tracer, recordContent: true })));
    const spans = memory.finished();
    const [first, second] = [spanNamed(spans, 'chat', 0), spanNamed(spans, 'chat', 1)];
    expect(first.attributes['gen_ai.input.messages']).toBeUndefined();
    expect(first.attributes['gen_ai.system_instructions']).toBeUndefined();
    expect(parsed(first.attributes['gen_ai.output.messages'])).toEqual([
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'current_time', arguments: { zone: 'UTC' } }], finish_reason: 'toolUse' },
    ]);
    const user = { role: 'user', parts: [{ type: 'text', content: 'What time is it?' }] };
    expect(parsed(second.attributes['gen_ai.input.messages'])).toEqual([
      user,
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'current_time', arguments: { zone: 'UTC' } }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: 'error: no clock' }] },
    ]);
    const instructions = [{ type: 'text', content: 'Be brief.' }];
    expect(parsed(second.attributes['gen_ai.system_instructions'])).toEqual(instructions);
    const agent = spanNamed(spans, 'invoke_agent');
    expect([parsed(agent.attributes['gen_ai.input.messages']), parsed(agent.attributes['gen_ai.system_instructions'])]).toEqual([[user], instructions]);
    const toolSpan = spanNamed(spans, 'execute_tool current_time');
    expect([toolSpan.attributes['gen_ai.tool.call.arguments'], toolSpan.attributes['gen_ai.tool.call.result'], toolSpan.status.message]).toEqual(['{"zone":"UTC"}', undefined, 'error: no clock']);
  });

  it('O3, C1: a conversation of two loops gives one invoke_agent span per loop, each with its own chat and tool spans', async () => {
    const memory = memoryTracer();
    const provider = scriptedProvider([toolTurn(call('current_time', {}, 'c1')), answerTurn('It is noon.'), answerTurn('You are welcome.')]);
    const events = await lastValueFrom(
      of('What time is it?', 'Thanks!').pipe(conversation({ provider, registry: new ToolRegistry().register(clock) }), traceLoop<ConversationEvent>({ tracer: memory.tracer, agentName: 'clock' }), toArray()),
    );
    expect(only(events, 'loop_end')).toHaveLength(2);
    expect(memory.tree()).toEqual([
      'invoke_agent clock (INTERNAL)',
      '  chat (CLIENT)',
      '  execute_tool current_time (INTERNAL)',
      '  chat (CLIENT)',
      'invoke_agent clock (INTERNAL)',
      '  chat (CLIENT)',
    ]);
    const agents = memory.finished().filter((span) => span.name === 'invoke_agent clock');
    expect(agents[0]!.spanContext().traceId).not.toBe(agents[1]!.spanContext().spanId);
    expect(memory.ends().every((span) => span.ends === 1)).toBe(true);
  });

  it('O3: unsubscribing mid-tool ends the open execute_tool and invoke_agent spans with rx_tool_loop.cancelled: true; the ended reply is left as it was', () => {
    const memory = memoryTracer();
    const hanging = tool('current_time', () => NEVER);
    const provider = scriptedProvider([toolTurn(call('current_time', {}, 'c1'))]);
    const seen: string[] = [];
    const subscription = runEventedToolLoop({ provider, registry: new ToolRegistry().register(hanging), messages: question })
      .pipe(traceLoop({ tracer: memory.tracer }))
      .subscribe((event) => seen.push(event.type));
    expect(seen).toEqual(['turn_start', 'message_start', 'tool_call', 'tool_start', 'message_end']);
    expect(memory.finished().map((span) => span.name)).toEqual(['chat']);
    subscription.unsubscribe();
    const spans = memory.finished();
    expect(spans.map((span) => [span.name, span.attributes['rx_tool_loop.cancelled']])).toEqual([
      ['chat', undefined],
      ['execute_tool current_time', true],
      ['invoke_agent', true],
    ]);
    expect(memory.ends().every((span) => span.ends === 1)).toBe(true);
  });

  it('O3: unsubscribing while the provider streams ends the chat span too, marked cancelled', () => {
    const memory = memoryTracer();
    const provider = () => new Observable<ProviderEvent>((subscriber) => subscriber.next(start));
    const subscription = runEventedToolLoop({ provider, registry: new ToolRegistry(), messages: question }).pipe(traceLoop({ tracer: memory.tracer })).subscribe();
    subscription.unsubscribe();
    expect(memory.finished().map((span) => [span.name, span.attributes['rx_tool_loop.cancelled']])).toEqual([
      ['chat', true],
      ['invoke_agent', true],
    ]);
  });

  it('O3: a consumer that unsubscribes on hearing loop_end sees every span ended as it should, none marked cancelled', () => {
    const memory = memoryTracer();
    const loop = runEventedToolLoop({ provider: s04Script(), registry: new ToolRegistry().register(clock), messages: question }).pipe(traceLoop({ tracer: memory.tracer }));
    loop.pipe(takeWhile((event) => event.type !== 'loop_end', true)).subscribe();
    expect(memory.finished()).toHaveLength(4);
    expect(memory.finished().some((span) => span.attributes['rx_tool_loop.cancelled'] !== undefined)).toBe(false);
  });

  it('O3: a consumer that leaves on the first event, inside the loop\'s subscribe, closes the loop at once: no provider call; its open spans end cancelled', () => {
    const memory = memoryTracer();
    let calls = 0;
    const provider = (input: ProviderInput) => {
      calls++;
      return s04Script()(input);
    };
    const seen: string[] = [];
    runEventedToolLoop({ provider, registry: new ToolRegistry().register(clock), messages: question })
      .pipe(traceLoop({ tracer: memory.tracer }), take(1))
      .subscribe((event) => seen.push(event.type));
    expect(seen).toEqual(['turn_start']);
    expect(calls).toBe(0);
    // the reply's span opened at turn_start, before the event went on: both end, cancelled, once
    expect(memory.finished().map((span) => [span.name, span.attributes['rx_tool_loop.cancelled']])).toEqual([
      ['chat', true],
      ['invoke_agent', true],
    ]);
    expect(memory.ends().every((span) => span.ends === 1)).toBe(true);
  });

  it('O1, O3: toolSpanContext(call) is the open span\'s context until an unsubscribe ends it, then undefined', () => {
    const memory = memoryTracer();
    const hanging = tool('current_time', () => NEVER);
    const provider = scriptedProvider([toolTurn(call('current_time', {}, 'c1'))]);
    const started: LoopEvent[] = [];
    const subscription = runEventedToolLoop({ provider, registry: new ToolRegistry().register(hanging), messages: question })
      .pipe(traceLoop({ tracer: memory.tracer }))
      .subscribe((event) => event.type === 'tool_start' && started.push(event));
    const running = started[0]?.type === 'tool_start' ? started[0].call : undefined;
    expect(running).toBeDefined();
    expect(trace.getSpan(toolSpanContext(running!)!)?.isRecording()).toBe(true);
    subscription.unsubscribe();
    expect(toolSpanContext(running!)).toBeUndefined();
    expect(spanNamed(memory.finished(), 'execute_tool current_time').attributes['rx_tool_loop.cancelled']).toBe(true);
  });

  it("O3, C3: an error of the conversation's prompts$ ends the open spans with ERROR before it is passed on", () => {
    const memory = memoryTracer();
    const prompts = new Subject<string>();
    const slow = tool('current_time', () => NEVER);
    const provider = scriptedProvider([toolTurn(call('current_time', {}, 'c1'))]);
    let failed: unknown;
    prompts.pipe(conversation({ provider, registry: new ToolRegistry().register(slow) }), traceLoop({ tracer: memory.tracer })).subscribe({ error: (error: unknown) => (failed = error) });
    prompts.next('What time is it?');
    prompts.error(new Error('input closed'));
    expect(failed).toEqual(new Error('input closed'));
    // C3: the running loop is aborted first, so its spans end as a loop's do; none is left open
    expect(memory.ends().every((span) => span.ends === 1)).toBe(true);
    expect(spanNamed(memory.finished(), 'invoke_agent').attributes['rx_tool_loop.reason']).toBe('aborted');
  });

  it('O3: a source that errors mid-loop ends every open span with ERROR and the message', () => {
    const memory = memoryTracer();
    const source = new Subject<LoopEvent>();
    let failed = false;
    source.pipe(traceLoop({ tracer: memory.tracer })).subscribe({ error: () => (failed = true) });
    source.next({ type: 'turn_start', turn: 1 });
    source.next({ type: 'tool_start', call: { id: 'c1', name: 'x', input: {} } });
    source.error(new Error('lost'));
    expect(failed).toBe(true);
    expect(memory.tree()).toEqual(['invoke_agent (INTERNAL) [ERROR: lost]', '  chat (CLIENT) [ERROR: lost]', '  execute_tool x (INTERNAL) [ERROR: lost]']);
  });

  it('O3: a source that completes without loop_end leaves no span open', () => {
    const memory = memoryTracer();
    const events: LoopEvent[] = [{ type: 'turn_start', turn: 1 }, { type: 'message_start' }];
    from(events).pipe(traceLoop({ tracer: memory.tracer })).subscribe();
    expect(memory.ends().map((span) => [span.name, span.ends])).toEqual([
      ['invoke_agent', 1],
      ['chat', 1],
    ]);
  });

  it('O1, R22: a resumed history\'s turn 0 makes no provider call, so it has no chat span; its tools are under invoke_agent', async () => {
    const memory = memoryTracer();
    const saved = [...question, { role: 'assistant' as const, content: '', stopReason: 'toolUse' as const, toolCalls: [{ id: 'c1', name: 'current_time', input: {} }] }];
    const provider = scriptedProvider([answerTurn('noon')]);
    await lastValueFrom(runEventedToolLoop({ provider, registry: new ToolRegistry().register(clock), messages: saved }).pipe(traceLoop({ tracer: memory.tracer })));
    expect(memory.tree()).toEqual(['invoke_agent (INTERNAL)', '  execute_tool current_time (INTERNAL)', '  chat (CLIENT)']);
  });

  it('O1, R7: a loop aborted at subscribe is one invoke_agent span, with reason aborted and no chat', async () => {
    const memory = memoryTracer();
    const controller = new AbortController();
    controller.abort();
    await lastValueFrom(runEventedToolLoop({ provider: s04Script(), registry: new ToolRegistry(), messages: question, signal: controller.signal }).pipe(traceLoop({ tracer: memory.tracer })));
    expect(memory.tree()).toEqual(['invoke_agent (INTERNAL)']);
    expect(memory.finished()[0]!.attributes['rx_tool_loop.reason']).toBe('aborted');
  });

  it('O4: a tracer that records nothing (the API without an SDK) gets the invoke_agent span alone, ended once; the events pass unchanged', async () => {
    const noSdk = trace.getTracer('no-sdk');
    const started: string[] = [];
    let ends = 0;
    const tracer: Tracer = {
      startSpan: (name, options, parent) => {
        const span = noSdk.startSpan(name, options, parent);
        started.push(name);
        const end = span.end.bind(span);
        span.end = (time) => {
          ends++;
          end(time);
        };
        return span;
      },
      startActiveSpan: noSdk.startActiveSpan.bind(noSdk) as Tracer['startActiveSpan'],
    };
    const traced = await s04((events) => events.pipe(traceLoop({ tracer, agentName: 's04', recordContent: true })));
    expect(traced).toEqual(await s04());
    expect(started).toEqual(['invoke_agent s04']);
    expect(ends).toBe(1);
  });

  it('O4: spans that a sampler drops record nothing, so nothing is built for them: with recordContent, no span event is added; the spans still end once; the events pass unchanged', async () => {
    const dropping = new BasicTracerProvider({ sampler: new AlwaysOffSampler() }).getTracer('dropped');
    const started: string[] = [];
    let added = 0;
    let ends = 0;
    const tracer: Tracer = {
      startSpan: (name, options, parent) => {
        const span = dropping.startSpan(name, options, parent);
        started.push(name);
        const [addEvent, end] = [span.addEvent.bind(span), span.end.bind(span)];
        span.addEvent = (...args) => (added++, addEvent(...args));
        span.end = (time) => (ends++, end(time));
        return span;
      },
      startActiveSpan: dropping.startActiveSpan.bind(dropping) as Tracer['startActiveSpan'],
    };
    const prompts = of('What time is it?');
    const run = (through: (events: Observable<ConversationEvent>) => Observable<ConversationEvent>) =>
      lastValueFrom(through(prompts.pipe(conversation({ provider: s04Script(), registry: new ToolRegistry().register(clock) }))).pipe(toArray()));
    const traced = await run((events) => events.pipe(traceLoop({ tracer, recordContent: true })));
    expect(traced).toEqual(await run((events) => events));
    // a dropped span still has a valid context (its children are dropped by the same decision): all are made
    expect(started).toEqual(['invoke_agent', 'chat', 'execute_tool current_time', 'chat']);
    expect(ends).toBe(4);
    expect(added).toBe(0);
  });

  describe('an agent tool (A1): its inner loop traced from the events it forwards', () => {
    const search = tool('search', (input: Record<string, string>) => `results for ${input.q ?? ''}`, { q: 'the query' });
    /** A researcher whose loop asks `search`, then answers; `provider` replaces its model. */
    const researcher = (provider = scriptedProvider([toolTurn(call('search', { q: 'time zones' }, 'r1')), answerTurn('UTC')]), registry = new ToolRegistry().register(search)) =>
      agentTool({
        name: 'researcher',
        description: 'researches a question',
        input: { question: 'what to find out' },
        agent: (input, { signal }) => runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: String(input.question) }], signal }),
      });
    const outer = (registry: ToolRegistry, options: { toolTimeoutMs?: number } = {}) =>
      runEventedToolLoop({
        provider: scriptedProvider([toolTurn(call('current_time', {}, 'c1'), call('researcher', { question: 'which zone?' }, 'c2')), answerTurn('noon, UTC')]),
        registry,
        messages: question,
        ...options,
      });

    it("O1, A4: an s04 loop with an agent tool: the inner loop's invoke_agent (named after the tool) sits under the call's execute_tool span, its chat and execute_tool spans under it; the events pass unchanged", async () => {
      const memory = memoryTracer();
      const registry = () => new ToolRegistry().register(clock).register(researcher());
      const traced = await lastValueFrom(outer(registry()).pipe(traceLoop({ tracer: memory.tracer, agentName: 'main', model: 'scripted' }), toArray()));
      expect(traced).toEqual(await lastValueFrom(outer(registry()).pipe(toArray())));
      expect(memory.tree()).toEqual([
        'invoke_agent main (INTERNAL)',
        '  chat scripted (CLIENT)',
        '  execute_tool current_time (INTERNAL)',
        '  execute_tool researcher (INTERNAL)',
        '    invoke_agent researcher (INTERNAL)',
        '      chat (CLIENT)',
        '      execute_tool search (INTERNAL)',
        '      chat (CLIENT)',
        '  chat scripted (CLIENT)',
      ]);
      expect(memory.ends().every((span) => span.ends === 1)).toBe(true);
      const spans = memory.finished();
      const tool = spanNamed(spans, 'execute_tool researcher');
      const inner = spanNamed(spans, 'invoke_agent researcher');
      expect(parentOf(spans, inner)).toBe(tool);
      expect(parentOf(spans, tool)).toBe(spanNamed(spans, 'invoke_agent main'));
      expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
      // the inner loop's spans carry the same attributes as the outer loop's; its model is its own, not named
      expect(inner.attributes).toEqual({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'researcher',
        'rx_tool_loop.reason': 'stop',
        'gen_ai.usage.input_tokens': 0,
        'gen_ai.usage.output_tokens': 0,
      });
      expect(spanNamed(spans, 'chat', 0).attributes).toEqual({ 'gen_ai.operation.name': 'chat', 'rx_tool_loop.turn': 1, 'gen_ai.response.finish_reasons': ['toolUse'] });
      expect(spanNamed(spans, 'execute_tool search').attributes).toEqual({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'search',
        'gen_ai.tool.call.id': 'r1',
        'gen_ai.tool.type': 'function',
      });
      // the researcher starts at its call's last byte (R3) and, scripted, ends before the outer reply does
      expect(spans.filter((span) => span.kind === SpanKind.CLIENT).map((span) => span.name)).toEqual(['chat', 'chat', 'chat scripted', 'chat scripted']);
      expect(spans.every((span) => span.status.code === SpanStatusCode.UNSET)).toBe(true);
      // ended as their events went by: the inner loop within its tool's span, the tool before the outer reply
      expect(spans.map((span) => span.name).indexOf('invoke_agent researcher')).toBeLessThan(spans.map((span) => span.name).indexOf('execute_tool researcher'));
    });

    it("O2, A2: an inner loop that fails sets its own spans to ERROR with the provider's message, and the outer call's span with its error result", async () => {
      const memory = memoryTracer();
      const failing = tool('search', () => {
        throw new Error('index down');
      });
      // the inner model asks search (which fails), then has no second turn: the inner loop ends with error
      const inner = researcher(scriptedProvider([toolTurn(call('search', { q: 'x' }, 'r1'))]), new ToolRegistry().register(failing));
      const events = await lastValueFrom(outer(new ToolRegistry().register(clock).register(inner)).pipe(traceLoop({ tracer: memory.tracer, agentName: 'main' }), toArray()));
      const message = 'provider error: scripted provider: no turn 2 (the script has 1)';
      const result = only(events, 'tool_result').find((event) => event.message.toolName === 'researcher')!.message;
      expect(result.content).toBe(`error: sub-agent researcher ended with error: ${message}`);
      expect(memory.tree()).toEqual([
        'invoke_agent main (INTERNAL)',
        '  chat (CLIENT)',
        '  execute_tool current_time (INTERNAL)',
        `  execute_tool researcher (INTERNAL) [ERROR: ${result.content}]`,
        `    invoke_agent researcher (INTERNAL) [ERROR: ${message}]`,
        '      chat (CLIENT)',
        '      execute_tool search (INTERNAL) [ERROR: error: index down]',
        `      chat (CLIENT) [ERROR: ${message}]`,
        '  chat (CLIENT)',
      ]);
      expect(spanNamed(memory.finished(), 'invoke_agent researcher').attributes['rx_tool_loop.reason']).toBe('error');
      expect(memory.ends().every((span) => span.ends === 1)).toBe(true);
    });

    it('O1, A4: nested two deep, each inner loop sits under its own call\'s execute_tool span, named after its tool', async () => {
      const memory = memoryTracer();
      const librarian = agentTool({
        name: 'librarian',
        description: 'finds books',
        agent: (_input, { signal }) =>
          runEventedToolLoop({ provider: scriptedProvider([toolTurn(call('search', { q: 'books' }, 'l1')), answerTurn('two books')]), registry: new ToolRegistry().register(search), messages: [{ role: 'user', content: 'books?' }], signal }),
      });
      const inner = researcher(scriptedProvider([toolTurn(call('librarian', {}, 'r1')), answerTurn('read them')]), new ToolRegistry().register(librarian));
      await lastValueFrom(outer(new ToolRegistry().register(clock).register(inner)).pipe(traceLoop({ tracer: memory.tracer, agentName: 'main' })));
      expect(memory.tree()).toEqual([
        'invoke_agent main (INTERNAL)',
        '  chat (CLIENT)',
        '  execute_tool current_time (INTERNAL)',
        '  execute_tool researcher (INTERNAL)',
        '    invoke_agent researcher (INTERNAL)',
        '      chat (CLIENT)',
        '      execute_tool librarian (INTERNAL)',
        '        invoke_agent librarian (INTERNAL)',
        '          chat (CLIENT)',
        '          execute_tool search (INTERNAL)',
        '          chat (CLIENT)',
        '      chat (CLIENT)',
        '  chat (CLIENT)',
      ]);
      expect(spanNamed(memory.finished(), 'execute_tool search').attributes['gen_ai.tool.call.id']).toBe('l1');
      expect(memory.ends().every((span) => span.ends === 1)).toBe(true);
    });

    it("O3, A3: unsubscribing mid inner tool ends every open span, at every depth, once, with rx_tool_loop.cancelled: true; the ended ones are left as they were", () => {
      const memory = memoryTracer();
      const hanging = tool('search', () => NEVER);
      const inner = researcher(scriptedProvider([toolTurn(call('search', { q: 'x' }, 'r1'))]), new ToolRegistry().register(hanging));
      const subscription = outer(new ToolRegistry().register(clock).register(inner)).pipe(traceLoop({ tracer: memory.tracer, agentName: 'main' })).subscribe();
      expect(memory.finished().map((span) => span.name)).toEqual(['execute_tool current_time', 'chat', 'chat']);
      subscription.unsubscribe();
      expect(memory.finished().map((span) => [span.name, span.attributes['rx_tool_loop.cancelled']])).toEqual([
        ['execute_tool current_time', undefined],
        ['chat', undefined],
        ['chat', undefined],
        ['execute_tool search', true],
        ['invoke_agent researcher', true],
        ['execute_tool researcher', true],
        ['invoke_agent main', true],
      ]);
      expect(memory.ends().map((span) => span.ends)).toEqual([1, 1, 1, 1, 1, 1, 1]);
    });

    it("O3, A3: an inner loop cut off before its loop_end (the call's toolTimeoutMs) has its open spans ended at the call's tool_result, with ERROR and the result", async () => {
      const memory = memoryTracer();
      const hanging = tool('search', () => NEVER);
      const inner = researcher(scriptedProvider([toolTurn(call('search', { q: 'x' }, 'r1'))]), new ToolRegistry().register(hanging));
      const events = await lastValueFrom(outer(new ToolRegistry().register(clock).register(inner), { toolTimeoutMs: 5 }).pipe(traceLoop({ tracer: memory.tracer }), toArray()));
      const result = only(events, 'tool_result').find((event) => event.message.toolName === 'researcher')!.message;
      expect(result.isError).toBe(true);
      expect(memory.tree()).toEqual([
        'invoke_agent (INTERNAL)',
        '  chat (CLIENT)',
        '  execute_tool current_time (INTERNAL)',
        `  execute_tool researcher (INTERNAL) [ERROR: ${result.content}]`,
        `    invoke_agent researcher (INTERNAL) [ERROR: ${result.content}]`,
        '      chat (CLIENT)',
        `      execute_tool search (INTERNAL) [ERROR: ${result.content}]`,
        '  chat (CLIENT)',
      ]);
      expect(memory.finished().some((span) => span.attributes['rx_tool_loop.cancelled'] !== undefined)).toBe(false);
      expect(memory.ends().every((span) => span.ends === 1)).toBe(true);
    });

    it('O2 (revised), A1: recordContent records the inner loop\'s content on its own spans, as the conventions\' attributes', async () => {
      const memory = memoryTracer();
      await lastValueFrom(outer(new ToolRegistry().register(clock).register(researcher())).pipe(traceLoop({ tracer: memory.tracer, recordContent: true })));
      const spans = memory.finished();
      const search = spanNamed(spans, 'execute_tool search');
      expect([search.attributes['gen_ai.tool.call.arguments'], search.attributes['gen_ai.tool.call.result']]).toEqual(['{"q":"time zones"}', 'results for time zones']);
      const inner = spanNamed(spans, 'invoke_agent researcher');
      const innerChats = spans.filter((span) => span.name === 'chat' && parentOf(spans, span) === inner);
      expect(innerChats.map((span) => parsed(span.attributes['gen_ai.output.messages']))).toEqual([
        [{ role: 'assistant', parts: [{ type: 'tool_call', id: 'r1', name: 'search', arguments: { q: 'time zones' } }], finish_reason: 'toolUse' }],
        [{ role: 'assistant', parts: [{ type: 'text', content: 'UTC' }], finish_reason: 'stop' }],
      ]);
      expect(parsed(inner.attributes['gen_ai.input.messages'])).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'which zone?' }] }]);
      expect(spans.every((span) => span.events.length === 0)).toBe(true);
    });

    it('O4: a tracer that records nothing gets the outer invoke_agent span alone, also with an agent tool', async () => {
      const noSdk = trace.getTracer('no-sdk');
      const started: string[] = [];
      const tracer: Tracer = {
        startSpan: (name, options, parent) => (started.push(name), noSdk.startSpan(name, options, parent)),
        startActiveSpan: noSdk.startActiveSpan.bind(noSdk) as Tracer['startActiveSpan'],
      };
      await lastValueFrom(outer(new ToolRegistry().register(clock).register(researcher())).pipe(traceLoop({ tracer, agentName: 'main' })));
      expect(started).toEqual(['invoke_agent main']);
    });
  });

  describe('a tracer that throws (O3 exactly)', () => {
    const failing = tool('current_time', () => {
      throw new Error('no clock');
    });
    const failingRun = () => runEventedToolLoop({ provider: s04Script(), registry: new ToolRegistry().register(failing), messages: question });
    let told: unknown[][];
    beforeEach(() => {
      told = [];
      const keep = (...args: unknown[]) => void told.push(args);
      diag.setLogger({ error: keep, warn: keep, info: keep, debug: keep, verbose: keep }, DiagLogLevel.ERROR);
    });
    afterEach(() => diag.disable());

    it('O3 exactly: a setStatus that throws (a failing tool\'s span) fails nothing: the run is the untraced run, every span started ends once, and the throw is told to diag', async () => {
      const hostile = hostileTracer({ methods: ['setStatus'], rate: 1, seed: 1 });
      const traced = await lastValueFrom(failingRun().pipe(traceLoop({ tracer: hostile.tracer }), toArray()));
      // a failure's stack (R25) names the code path that ran: not part of the run
      const withoutStacks = (events: LoopEvent[]) => JSON.parse(JSON.stringify(events, (key, value: unknown) => (key === 'stack' ? undefined : value))) as unknown;
      expect(withoutStacks(traced)).toEqual(withoutStacks(await lastValueFrom(failingRun().pipe(toArray()))));
      expect(only(traced, 'tool_result')[0]!.message.content).toBe('error: no clock');
      expect(hostile.thrown()).toBe(1);
      expect(hostile.ends().map((span) => [span.name, span.ends])).toEqual([
        ['invoke_agent', 1],
        ['chat', 1],
        ['execute_tool current_time', 1],
        ['chat', 1],
      ]);
      expect(told.map(([message]) => message)).toEqual(['rx-tool-loop/otel: the tracer threw from setStatus; the run goes on']);
    });

    it('O3 exactly: an end that throws during an unsubscribe: unsubscribe() does not throw, and every open span still gets its one end', () => {
      const hostile = hostileTracer({ methods: ['end'], rate: 1, seed: 1 });
      const hanging = tool('current_time', () => NEVER);
      const provider = scriptedProvider([toolTurn(call('current_time', {}, 'c1'))]);
      const seen: string[] = [];
      const subscription = runEventedToolLoop({ provider, registry: new ToolRegistry().register(hanging), messages: question })
        .pipe(traceLoop({ tracer: hostile.tracer }))
        .subscribe((event) => seen.push(event.type));
      expect(seen).toEqual(['turn_start', 'message_start', 'tool_call', 'tool_start', 'message_end']);
      expect(() => subscription.unsubscribe()).not.toThrow();
      expect(hostile.ends().map((span) => [span.name, span.ends])).toEqual([
        ['invoke_agent', 1],
        ['chat', 1],
        ['execute_tool current_time', 1],
      ]);
      expect(told).toHaveLength(3);
    });

    it('O3 exactly: a startSpan that throws leaves its loop untraced and the run as it was; the next loop of a conversation is traced again', async () => {
      let calls = 0;
      const memory = memoryTracer();
      const tracer: Tracer = {
        startSpan: (name, options, parent) => {
          if (calls++ === 0) throw new Error('no spans today');
          return memory.tracer.startSpan(name, options, parent);
        },
        startActiveSpan: memory.tracer.startActiveSpan,
      };
      const provider = () => scriptedProvider([answerTurn('Hi.'), answerTurn('Bye.')]);
      const run = (through: (events: Observable<ConversationEvent>) => Observable<ConversationEvent>) =>
        lastValueFrom(through(of('hello', 'goodbye').pipe(conversation({ provider: provider(), registry: new ToolRegistry() }))).pipe(toArray()));
      expect(await run((events) => events.pipe(traceLoop({ tracer })))).toEqual(await run((events) => events));
      expect(memory.tree()).toEqual(['invoke_agent (INTERNAL)', '  chat (CLIENT)']);
      expect(memory.ends().every((span) => span.ends === 1)).toBe(true);
    });
  });

  describe('with a context manager', () => {
    beforeAll(() => context.setGlobalContextManager(new StackContextManager()));
    afterAll(() => context.disable());

    it('O1: the invoke_agent span is the child of the span active when the traced loop is subscribed', async () => {
      const memory = memoryTracer();
      const request = memory.tracer.startSpan('POST /chat');
      const loop = runEventedToolLoop({ provider: s04Script(), registry: new ToolRegistry().register(clock), messages: question }).pipe(traceLoop({ tracer: memory.tracer, agentName: 's04' }));
      const done = context.with(trace.setSpan(context.active(), request), () => lastValueFrom(loop));
      await done;
      request.end();
      expect(memory.tree()).toEqual([
        'POST /chat (INTERNAL)',
        '  invoke_agent s04 (INTERNAL)',
        '    chat (CLIENT)',
        '    execute_tool current_time (INTERNAL)',
        '    chat (CLIENT)',
      ]);
    });

    it("O1: a tool that runs a traced loop of its own inside toolSpanContext(call) nests the inner loop's spans under its execute_tool span", async () => {
      const memory = memoryTracer();
      let during: Span | undefined;
      const researcher: Tool = {
        name: 'research',
        description: 'asks a researcher agent',
        input: { question: 'what to find out' },
        handler: (input: Record<string, string>, { call: own, signal }) => {
          during = trace.getSpan(toolSpanContext(own)!);
          const inner = runEventedToolLoop({ provider: scriptedProvider([answerTurn('found it')]), registry: new ToolRegistry(), messages: [{ role: 'user', content: input.question ?? '' }], signal });
          const answer = inner.pipe(traceLoop({ tracer: memory.tracer, agentName: 'researcher' }), last(), map((end) => (end.type === 'loop_end' ? end.assistant.content : '')));
          return context.with(toolSpanContext(own) ?? context.active(), () => lastValueFrom(answer));
        },
      };
      const provider = scriptedProvider([toolTurn(call('research', { question: 'why?' }, 'c1')), answerTurn('because')]);
      const loop = runEventedToolLoop({ provider, registry: new ToolRegistry().register(researcher), messages: question }).pipe(traceLoop({ tracer: memory.tracer, agentName: 'main' }));
      const events = await lastValueFrom(loop.pipe(toArray()));
      expect(only(events, 'tool_result')[0]!.message.content).toBe('found it');
      expect(during).toBeDefined();
      expect(toolSpanContext(only(events, 'tool_start')[0]!.call)).toBeUndefined(); // only while its span is open
      expect(memory.tree()).toEqual([
        'invoke_agent main (INTERNAL)',
        '  chat (CLIENT)',
        '  execute_tool research (INTERNAL)',
        '    invoke_agent researcher (INTERNAL)',
        '      chat (CLIENT)',
        '  chat (CLIENT)',
      ]);
    });
    it("O1, A1: an agent tool whose inner loop has a traceLoop of its own, subscribed inside toolSpanContext(call), is traced once: by that traceLoop, under the call's span", async () => {
      const memory = memoryTracer();
      const search = tool('search', () => 'found');
      const researcher = agentTool({
        name: 'researcher',
        description: 'researches',
        agent: (_input, { call: own, signal }) => {
          const inner = runEventedToolLoop({ provider: scriptedProvider([toolTurn(call('search', {}, 'r1')), answerTurn('UTC')]), registry: new ToolRegistry().register(search), messages: question, signal });
          const traced = inner.pipe(traceLoop<LoopEvent>({ tracer: memory.tracer, agentName: 'own-researcher' }));
          // subscribed inside the call's span (a context manager is registered here)
          return new Observable<LoopEvent>((subscriber) => context.with(toolSpanContext(own) ?? context.active(), () => traced.subscribe(subscriber)));
        },
      });
      const provider = scriptedProvider([toolTurn(call('researcher', {}, 'c1')), answerTurn('noon')]);
      const events = await lastValueFrom(runEventedToolLoop({ provider, registry: new ToolRegistry().register(researcher), messages: question }).pipe(traceLoop({ tracer: memory.tracer, agentName: 'main' }), toArray()));
      expect(only(events, 'tool_update').filter((update) => update.event !== undefined).length).toBeGreaterThan(0);
      expect(memory.tree()).toEqual([
        'invoke_agent main (INTERNAL)',
        '  chat (CLIENT)',
        '  execute_tool researcher (INTERNAL)',
        '    invoke_agent own-researcher (INTERNAL)',
        '      chat (CLIENT)',
        '      execute_tool search (INTERNAL)',
        '      chat (CLIENT)',
        '  chat (CLIENT)',
      ]);
      expect(memory.ends().every((span) => span.ends === 1)).toBe(true);
    });

    it('O1, A1: an agent tool whose inner loop has a traceLoop of its own, subscribed outside any span, is traced once: by that traceLoop, on its own', async () => {
      const memory = memoryTracer();
      const search = tool('search', () => 'found');
      const researcher = agentTool({
        name: 'researcher',
        description: 'researches',
        agent: (_input, { signal }) =>
          runEventedToolLoop({ provider: scriptedProvider([toolTurn(call('search', {}, 'r1')), answerTurn('UTC')]), registry: new ToolRegistry().register(search), messages: question, signal }).pipe(
            traceLoop<LoopEvent>({ tracer: memory.tracer, agentName: 'own-researcher' }),
          ),
      });
      const provider = scriptedProvider([toolTurn(call('researcher', {}, 'c1')), answerTurn('noon')]);
      const events = await lastValueFrom(runEventedToolLoop({ provider, registry: new ToolRegistry().register(researcher), messages: question }).pipe(traceLoop({ tracer: memory.tracer, agentName: 'main' }), toArray()));
      expect(only(events, 'tool_update').filter((update) => update.event !== undefined).length).toBeGreaterThan(0);
      expect(memory.tree()).toEqual([
        'invoke_agent main (INTERNAL)',
        '  chat (CLIENT)',
        '  execute_tool researcher (INTERNAL)',
        '  chat (CLIENT)',
        'invoke_agent own-researcher (INTERNAL)',
        '  chat (CLIENT)',
        '  execute_tool search (INTERNAL)',
        '  chat (CLIENT)',
      ]);
      expect(memory.ends().every((span) => span.ends === 1)).toBe(true);
    });
  });

  it('O1: options are checked at call time: a TypeError names what is wrong', () => {
    const { tracer } = memoryTracer();
    expect(() => traceLoop(undefined as never)).toThrow(new TypeError('traceLoop: options must be an object, got undefined'));
    expect(() => traceLoop({} as never)).toThrow(new TypeError('traceLoop: tracer must be an OpenTelemetry Tracer (with startSpan), got undefined'));
    expect(() => traceLoop({ tracer, agentName: 3 as never })).toThrow(new TypeError('traceLoop: agentName must be a string, got 3, a number'));
    expect(() => traceLoop({ tracer, model: null as never })).toThrow(new TypeError('traceLoop: model must be a string, got null'));
    expect(() => traceLoop({ tracer, recordContent: 'yes' as never })).toThrow(new TypeError('traceLoop: recordContent must be a boolean, got "yes", a string'));
  });

  it('O1: the options are copied at call time (R20): changing them afterwards changes nothing', async () => {
    const memory = memoryTracer();
    const options = { tracer: memory.tracer, agentName: 'first' };
    const operator = traceLoop<LoopEvent>(options);
    options.agentName = 'second';
    await s04((events) => events.pipe(operator));
    expect(memory.finished().at(-1)!.name).toBe('invoke_agent first');
  });
});

/** A content attribute (a JSON string) read back. */
function parsed(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}
