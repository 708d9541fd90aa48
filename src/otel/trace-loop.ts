import { type MonoTypeOperatorFunction, Observable, Subscriber } from 'rxjs';
import { type Attributes, type Context, type Span, type SpanOptions, type Tracer, SpanKind, SpanStatusCode, context, isSpanContextValid, trace } from '@opentelemetry/api';
import type { AgentMessage, AssistantMessage, ConversationEvent, LoopEvent, StopReason, ToolCall, ToolResultMessage, Usage } from '../types.js';
import { errorText, shown } from '../util/values.js';

/** What {@link traceLoop} records with (O1–O3). */
export interface TraceLoopOptions {
  /** Where the spans go: `trace.getTracer('my-agent')`, or a provider's own. */
  tracer: Tracer;
  /** `gen_ai.agent.name`, and the `invoke_agent` span's name: `invoke_agent NAME`. */
  agentName?: string;
  /** `gen_ai.request.model`, and the `chat` spans' name: `chat MODEL`. */
  model?: string;
  /** Add the messages and results to the spans as span events (default false: they may hold what users said). */
  recordContent?: boolean;
}

/**
 * Traces a loop, or a conversation, in the OpenTelemetry GenAI semantic conventions (O1–O3). Every event
 * passes through unchanged, in its frame; beside them the operator keeps one `invoke_agent` span per loop
 * (INTERNAL: the agent runs in this process), one `chat` span per provider call (CLIENT) and one
 * `execute_tool` span per call (INTERNAL), the last two children of the first. The `invoke_agent` span's
 * parent is the span active when the operator is subscribed (`context.with`), so a traced run nests in
 * the application's own trace.
 *
 * A span is started and ended as its event goes by, before the event is passed on, so a consumer that
 * unsubscribes on hearing `loop_end` still sees it ended as it should. Unsubscribing ends every span still
 * open, with `rx_tool_loop.cancelled: true` (O3); an error of the source ends them with status ERROR; a
 * source that completes without its `loop_end` ends them too: no span is left open, whatever happens.
 *
 * ```text
 * loop:          1s-(cS)u-R-E2s-t-e-(FL|)     1/2 = turn_start, s/u/e = message_start/_end, c = tool_call,
 * traceLoop:     1s-(cS)u-R-E2s-t-e-(FL|)     S = tool_start, R = tool_result, E/F = turn_end, L = loop_end
 * invoke_agent:  [------------------]
 * chat 1:        [------]
 * execute_tool:     [-----]
 * chat 2:                    [----]
 * ```
 *
 * Turn 0 (R22, a resumed history) makes no provider call, so it has no `chat` span. A call answered
 * without running (an unknown tool, an invalid input, a duplicate id, a denied call, one answered by
 * its hook or dropped by an abort: no `tool_start`, R23) gets an `execute_tool` span of zero length at
 * its `tool_result`, with `rx_tool_loop.tool.started: false`, so the trace shows what the model asked for.
 * A tracer that records nothing (the API without an SDK) gets the `invoke_agent` span alone, and each event
 * then costs one field test (O4); a span that a sampler drops gets none of its attributes or content built.
 *
 * An agent tool (A1) forwards its inner loop's events as the call's `tool_update`s: from them the operator
 * traces the inner loop as the outer one, with `invoke_agent TOOL` (the agent named after the tool) under the
 * call's `execute_tool` span and its `chat` and `execute_tool` spans under that, at any depth. What the inner
 * loop left open ends at the call's `tool_result` (ERROR with the result when it is an error: the inner loop
 * was cut off) or, with the rest, on unsubscribe. An inner loop that a traceLoop (recording) saw already —
 * the user traced it, e.g. subscribed inside `toolSpanContext(call)` — is not traced twice.
 *
 * ```ts
 * import { trace } from '@opentelemetry/api';
 * import { traceLoop } from 'rx-tool-loop/otel';
 *
 * runEventedToolLoop({ provider, registry, messages })
 *   .pipe(traceLoop({ tracer: trace.getTracer('support-bot'), agentName: 'support', model: 'gpt-4o-mini' }))
 *   .subscribe(render);
 * ```
 *
 * @throws TypeError when an option is wrong (no tracer, a name that is not a string), at call time.
 */
export function traceLoop<E extends LoopEvent | ConversationEvent>(options: TraceLoopOptions): MonoTypeOperatorFunction<E> {
  const settings = checkOptions(options);
  return (source) =>
    new Observable<E>((subscriber) => {
      source.subscribe(new TraceSubscriber(subscriber, new LoopSpans(settings, context.active())));
    });
}

/**
 * The operator's one layer over the source: each event recorded, then passed on. Made before it subscribes
 * and added to the consumer's subscriber, so an unsubscribe reaches the loop at once, even while the loop
 * is still inside its subscribe; then the spans still open end, as cancelled (O3).
 */
class TraceSubscriber<E extends LoopEvent | ConversationEvent> extends Subscriber<E> {
  constructor(
    destination: Subscriber<E>,
    private readonly spans: LoopSpans,
  ) {
    super(destination);
  }

  // `next` itself rather than `_next`: this sits on every event, one call less each (O4)
  override next(event: E): void {
    if (this.isStopped) return;
    try {
      this.spans.observe(event);
    } catch (error) {
      // as an operator's callback that throws: the run fails with it
      this.destination.error(error);
      return;
    }
    this.destination.next(event);
  }

  protected override _error(error: unknown): void {
    this.spans.failAll(error);
    super._error(error);
  }

  protected override _complete(): void {
    this.spans.closeAll();
    super._complete();
  }

  override unsubscribe(): void {
    if (this.closed) return;
    super.unsubscribe(); // the source first: nothing more comes while the spans end
    this.spans.cancelAll(); // nothing left after an error or a complete: only an unsubscribe cancels
  }
}

/** An execute_tool span open now; its context is made only when a tool asks for it (toolSpanContext). */
interface OpenTool {
  span: Span;
  call: ToolCall;
  parent: Context;
  context?: Context;
  /**
   * An agent tool's inner loop (A1), traced from the events its updates forward: made at the first one;
   * `null` when that event was traced already (the inner loop has a traceLoop of its own).
   */
  inner?: LoopSpans | null;
}

/** The context of a tool's span, made once: for a tool that asks (toolSpanContext) and for its inner loop. */
function contextOf(open: OpenTool): Context {
  return (open.context ??= trace.setSpan(open.parent, open.span));
}

// The module's two side channels, both weak, both written only while a tracer records (never on O4's path):
//
// - toolSpanContext(call) has nothing but the call to go by, so the call must lead to its span: each
//   execute_tool span open now, by the call object its tool_start carries (the handler's `context.call`).
const openTools = new WeakMap<ToolCall, OpenTool>();
// - "an inner loop traced by a traceLoop of its own is not traced twice" must hold wherever the user
//   subscribed that traceLoop, so it is told by the events: the first event of each loop a recording traceLoop
//   traced. An agent tool forwards every inner event from the first (A1), and the outer traceLoop decides at a
//   call's first forwarded event (forward), so one mark a loop is enough.
const loopStarts = new WeakSet<object>();

/**
 * The context of `call`'s `execute_tool` span while a {@link traceLoop} has it open (from its `tool_start`
 * to its `tool_result`), else `undefined`. A tool that runs a loop of its own (a sub-agent) subscribes it
 * inside this context, so the inner loop's `invoke_agent` span is the tool span's child (O1):
 *
 * ```ts
 * handler: (input, { call, signal }) => {
 *   const researcher = runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: input.question }], signal });
 *   // subscribed inside the call's span: the researcher's spans go under it
 *   return context.with(toolSpanContext(call) ?? context.active(), () =>
 *     lastValueFrom(researcher.pipe(traceLoop<LoopEvent>({ tracer, agentName: 'researcher' }))),
 *   ).then((end) => (end.type === 'loop_end' ? end.assistant.content : ''));
 * },
 * ```
 */
export function toolSpanContext(call: ToolCall): Context | undefined {
  const open = openTools.get(call);
  return open === undefined ? undefined : contextOf(open);
}

interface TraceSettings {
  tracer: Tracer;
  recordContent: boolean;
  // made once: every loop's and every reply's span starts with the same name, kind and attributes
  agent: { name: string; options: SpanOptions };
  chat: { name: string; options: SpanOptions };
  /** The settings of agent tools' inner loops, by tool name: made at a tool's first forwarded event. */
  inner: Map<string, TraceSettings>;
}

/** R20's way: checked and copied at call time, so changing the options object later changes nothing. */
function checkOptions(options: TraceLoopOptions): TraceSettings {
  if (options === null || typeof options !== 'object') throw new TypeError(`traceLoop: options must be an object, got ${shown(options)}`);
  const { tracer, agentName, model, recordContent } = options;
  if (tracer === null || typeof tracer !== 'object' || typeof tracer.startSpan !== 'function') {
    throw new TypeError(`traceLoop: tracer must be an OpenTelemetry Tracer (with startSpan), got ${shown(tracer)}`);
  }
  if (agentName !== undefined && typeof agentName !== 'string') throw new TypeError(`traceLoop: agentName must be a string, got ${shown(agentName)}`);
  if (model !== undefined && typeof model !== 'string') throw new TypeError(`traceLoop: model must be a string, got ${shown(model)}`);
  if (recordContent !== undefined && typeof recordContent !== 'boolean') {
    throw new TypeError(`traceLoop: recordContent must be a boolean, got ${shown(recordContent)}`);
  }
  return settingsOf(tracer, agentName, model, recordContent === true);
}

function settingsOf(tracer: Tracer, agentName: string | undefined, model: string | undefined, recordContent: boolean): TraceSettings {
  const agentAttributes: Attributes = { 'gen_ai.operation.name': 'invoke_agent' };
  if (agentName !== undefined) agentAttributes['gen_ai.agent.name'] = agentName;
  const chatAttributes: Attributes = { 'gen_ai.operation.name': 'chat' };
  if (model !== undefined) agentAttributes['gen_ai.request.model'] = chatAttributes['gen_ai.request.model'] = model;
  return {
    tracer,
    recordContent,
    agent: { name: agentName === undefined ? 'invoke_agent' : `invoke_agent ${agentName}`, options: { kind: SpanKind.INTERNAL, attributes: Object.freeze(agentAttributes) } },
    chat: { name: model === undefined ? 'chat' : `chat ${model}`, options: { kind: SpanKind.CLIENT, attributes: Object.freeze(chatAttributes) } },
    inner: new Map(),
  };
}

/** An agent tool's inner loop: the agent is named after the tool; its model is its own, not known here. */
function innerSettings(settings: TraceSettings, toolName: string): TraceSettings {
  let inner = settings.inner.get(toolName);
  if (inner === undefined) settings.inner.set(toolName, (inner = settingsOf(settings.tracer, toolName, undefined, settings.recordContent)));
  return inner;
}

/**
 * The open spans of one subscription: its current loop's, its current provider call's, its running tools'
 * and, under an agent tool's span, its inner loop's (another LoopSpans, fed the events the tool forwards).
 */
class LoopSpans {
  private agent: Span | undefined;
  private agentContext: Context | undefined;
  private chat: Span | undefined;
  // the running calls (ids unique within a turn, R28): a few at a time, so a list beats a Map here
  private tools: OpenTool[] = [];
  private off = false; // the tracer records nothing (openAgent)
  // recordContent, and the chat span records: the reply so far, for its event (none built for a span that drops it)
  private content = false;
  private text = '';
  private calls: ToolCall[] = [];

  constructor(
    private readonly settings: TraceSettings,
    /** The context active at subscribe: every loop's `invoke_agent` span is its child. */
    private readonly parent: Context,
  ) {}

  /** An event of the traced source itself: recorded; the first of a loop traced is marked (loopStarts). */
  observe(event: LoopEvent | ConversationEvent): void {
    if (this.agent !== undefined) {
      // O4: the loop's span records nothing, so neither would any other: only its end is left to do
      if (this.off) {
        if (event.type === 'loop_end') this.endOffLoop();
      } else this.record(event);
      return;
    }
    this.record(event); // opens the loop's span (a loop_end alone opens and ends it)
    if (!this.off && (this.agent !== undefined || event.type === 'loop_end')) loopStarts.add(event);
  }

  record(event: LoopEvent | ConversationEvent): void {
    switch (event.type) {
      case 'user_message':
        this.openAgent();
        if (this.settings.recordContent && this.agent!.isRecording()) this.agent!.addEvent('gen_ai.user.message', { content: event.message.content });
        return;
      case 'turn_start':
        this.openAgent();
        if (event.turn >= 1 && !this.off) this.openChat(event.turn); // turn 0 resumes a saved history: no provider call
        return;
      case 'loop_end':
        this.endLoop(event.reason, event.assistant, event.usage, event.messages);
        return;
    }
    if (this.off) return; // O4: a tracer that records nothing gets the invoke_agent span alone
    switch (event.type) {
      case 'text_delta':
        if (this.content) this.text += event.text;
        return;
      case 'tool_call':
        if (this.content) this.calls.push(event.call);
        return;
      case 'message_end':
        this.endChat(event.stopReason, event.errorMessage, event.usage);
        return;
      case 'tool_start':
        this.startTool(event.call);
        return;
      case 'tool_result':
        this.endTool(event.message);
        return;
      case 'tool_update':
        if (event.event !== undefined) this.forward(event.toolCallId, event.event);
        return;
      case 'turn_end':
        // a provider that failed, or an abort, ends the reply without a message_end: the turn's assistant says how
        this.endChatWith(event.assistant);
        return;
      default:
        return; // message_start, deltas: nothing to record
    }
  }

  /** Unsubscribed: every open span ends, marked as cancelled (O3). */
  cancelAll(): void {
    this.endOpen({ 'rx_tool_loop.cancelled': true });
  }

  /** The source completed: every span still open ends (O3). */
  closeAll(): void {
    this.endOpen(NO_ATTRIBUTES);
  }

  /** The source errored (a conversation's `prompts$`, C3): every span still open ends with status ERROR (O3). */
  failAll(error: unknown): void {
    this.endOpen(NO_ATTRIBUTES, errorText(error));
  }

  private endOpen(attributes: Attributes, errorMessage?: string): void {
    if (this.agent === undefined && this.chat === undefined && this.tools.length === 0) return;
    const open: Span[] = [];
    for (const tool of this.tools) {
      tool.inner?.endOpen(attributes, errorMessage); // an inner loop's spans end before the tool's
      unlist(tool);
      open.push(tool.span);
    }
    if (this.chat !== undefined) open.push(this.chat);
    if (this.agent !== undefined) open.push(this.agent);
    this.tools = [];
    this.chat = undefined;
    this.agent = undefined;
    this.agentContext = undefined;
    for (const span of open) {
      span.setAttributes(attributes);
      if (errorMessage !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage });
      span.end();
    }
  }

  /** A loop's first event opens its span: in a conversation, the first after the last loop's `loop_end`. */
  private openAgent(): void {
    if (this.agent !== undefined) return;
    const { tracer, agent } = this.settings;
    const span = tracer.startSpan(agent.name, agent.options, this.parent);
    // no SDK behind the tracer (a span that records nothing and has no valid context): tracing is off, and
    // a reply's or a call's span would be as empty, so none is made; the events go straight through (O4)
    this.off = !span.isRecording() && !isSpanContextValid(span.spanContext());
    this.agent = span;
    if (!this.off) this.agentContext = trace.setSpan(this.parent, span);
  }

  /** O4: the `loop_end` of a loop whose span records nothing: that span ends, alone (nothing else opened). */
  private endOffLoop(): void {
    const agent = this.agent!;
    this.agent = undefined;
    agent.end();
  }

  private endLoop(reason: string, assistant: AssistantMessage, usage: Usage, messages: readonly AgentMessage[]): void {
    this.openAgent(); // R7: a loop aborted at subscribe has loop_end as its only event
    this.endChatWith(assistant);
    const agent = this.agent!;
    if (agent.isRecording()) {
      agent.setAttribute('rx_tool_loop.reason', reason);
      agent.setAttributes(usageAttributes(usage));
      if (reason === 'error') agent.setStatus({ code: SpanStatusCode.ERROR, message: assistant.errorMessage ?? 'error' });
      if (this.settings.recordContent) agent.addEvent('rx_tool_loop.messages', { messages: json(messages) });
    }
    // every call of the loop has had its result by now (R5); anything left is ended, never leaked
    this.agent = undefined;
    this.endOpen(NO_ATTRIBUTES);
    agent.end();
  }

  private openChat(turn: number): void {
    this.endChat(undefined, undefined, undefined); // never open here: a turn's chat ends by its turn_end
    const { tracer, chat } = this.settings;
    this.chat = tracer.startSpan(chat.name, chat.options, this.agentContext);
    this.chat.setAttribute('rx_tool_loop.turn', turn);
    this.content = this.settings.recordContent && this.chat.isRecording();
    if (this.content) {
      this.text = '';
      this.calls = [];
    }
  }

  private endChatWith(assistant: AssistantMessage): void {
    if (this.chat !== undefined) this.endChat(assistant.stopReason, assistant.errorMessage, undefined);
  }

  private endChat(stopReason: StopReason | undefined, errorMessage: string | undefined, usage: Usage | undefined): void {
    const chat = this.chat;
    if (chat === undefined) return;
    this.chat = undefined;
    // a span the sampler dropped records nothing: none of its attributes is built
    if (chat.isRecording()) {
      if (stopReason !== undefined) chat.setAttribute('gen_ai.response.finish_reasons', [stopReason]);
      if (usage !== undefined) chat.setAttributes(usageAttributes(usage));
      if (stopReason === 'error') chat.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage ?? 'error' });
    }
    if (this.content) {
      const content: Attributes = { content: this.text, finish_reason: stopReason ?? 'unknown' };
      if (this.calls.length > 0) content.tool_calls = json(this.calls);
      chat.addEvent('gen_ai.assistant.message', content);
      this.content = false;
      this.text = '';
      this.calls = [];
    }
    chat.end();
  }

  /** `tool_start`: the handler runs now, inside its span (R23). */
  private startTool(call: ToolCall): void {
    const span = this.toolSpan(call.id, call.name);
    const open: OpenTool = { span, call, parent: this.agentContext! };
    this.tools.push(open);
    openTools.set(call, open);
    if (this.settings.recordContent && span.isRecording()) span.addEvent('gen_ai.tool.call.arguments', { arguments: json(call.input) });
  }

  /** `unstartedAt`: the moment of a call that never ran, its span's start and end. */
  private toolSpan(id: string, name: string, unstartedAt?: number): Span {
    this.openAgent();
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': name,
      'gen_ai.tool.call.id': id,
      'gen_ai.tool.type': 'function',
    };
    const options: SpanOptions = { kind: SpanKind.INTERNAL, attributes };
    if (unstartedAt !== undefined) {
      attributes['rx_tool_loop.tool.started'] = false;
      options.startTime = unstartedAt;
    }
    return this.settings.tracer.startSpan(`execute_tool ${name}`, options, this.agentContext);
  }

  private takeTool(id: string): OpenTool | undefined {
    const { tools } = this;
    for (let index = 0; index < tools.length; index++) {
      const open = tools[index]!;
      if (open.call.id !== id) continue;
      tools[index] = tools[tools.length - 1]!;
      tools.pop();
      unlist(open);
      return open;
    }
    return undefined;
  }

  /**
   * A1: an agent tool's update forwards `event` of its inner loop: recorded by the inner loop's spans, under
   * the tool's, at any depth (a forwarded update forwards in turn) — unless a recording traceLoop traced that
   * inner loop already: then its first event, the call's first forwarded one, is marked (loopStarts).
   */
  private forward(toolCallId: string, event: LoopEvent): void {
    const open = this.findTool(toolCallId);
    if (open === undefined) return;
    if (open.inner === undefined) open.inner = loopStarts.has(event) ? null : new LoopSpans(innerSettings(this.settings, open.call.name), contextOf(open));
    open.inner?.record(event);
  }

  private findTool(id: string): OpenTool | undefined {
    for (const open of this.tools) if (open.call.id === id) return open;
    return undefined;
  }

  private endTool(result: ToolResultMessage): void {
    const open = this.takeTool(result.toolCallId);
    // an inner loop still open at the result was cut off (a timeout, an error, no loop_end): ended with it
    if (open?.inner) open.inner.endOpen(NO_ATTRIBUTES, result.isError ? result.content : undefined);
    // answered without running (R23: no tool_start): a span of zero length, so the call is still seen
    const at = open === undefined ? performance.now() : undefined;
    const span = open?.span ?? this.toolSpan(result.toolCallId, result.toolName, at);
    if (span.isRecording()) {
      if (result.isError) span.setStatus({ code: SpanStatusCode.ERROR, message: result.content });
      if (this.settings.recordContent) span.addEvent('gen_ai.tool.message', { id: result.toolCallId, content: result.content, is_error: result.isError }, at);
    }
    span.end(at);
  }
}

const NO_ATTRIBUTES: Attributes = Object.freeze({});

/** `open` is no longer toolSpanContext's: unless another traceLoop of the same call has it now. */
function unlist(open: OpenTool): void {
  if (openTools.get(open.call) === open) openTools.delete(open.call);
}

function usageAttributes(usage: Usage): Attributes {
  const attributes: Attributes = { 'gen_ai.usage.input_tokens': usage.inputTokens, 'gen_ai.usage.output_tokens': usage.outputTokens };
  if (usage.cacheReadTokens !== undefined) attributes['gen_ai.usage.cache_read.input_tokens'] = usage.cacheReadTokens;
  if (usage.cacheWriteTokens !== undefined) attributes['gen_ai.usage.cache_creation.input_tokens'] = usage.cacheWriteTokens;
  return attributes;
}

/** Content for an event attribute: JSON (histories and inputs are JSON, R21, C5). */
function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
