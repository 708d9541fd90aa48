import { type MonoTypeOperatorFunction, Observable, Subscriber } from 'rxjs';
import { type Attributes, type Context, type SpanOptions, type Tracer, SpanKind, context, createContextKey, trace } from '@opentelemetry/api';
import type { AgentMessage, AssistantMessage, ConversationEvent, LoopEvent, Provider, StopReason, ToolCall, ToolResultMessage, Usage } from '../types.js';
import { modelOf } from '../providers/named-provider.js';
import { errorText, shown } from '../util/values.js';
import { inputAttributes, json, outputAttributes } from './content.js';
import { GuardedSpan, reported } from './guarded-span.js';

/** What {@link traceLoop} records with (O1–O3). */
export interface TraceLoopOptions {
  /** Where the spans go: `trace.getTracer('my-agent')`, or a provider's own. */
  tracer: Tracer;
  /** `gen_ai.agent.name`, and the `invoke_agent` span's name: `invoke_agent NAME`. */
  agentName?: string;
  /** `gen_ai.request.model`, and the `chat` spans' name: `chat MODEL`. */
  model?: string;
  /**
   * The loop's provider, to read `providerName` and `model` from, when it has them: the real providers
   * do (`openAIChatProvider` and `openAIResponsesProvider` say `'openai'`, `anthropicProvider` `'anthropic'`).
   * Read at call time; `providerName` and `model` given here win.
   */
  provider?: Provider | { readonly providerName?: string; readonly model?: string };
  /**
   * `gen_ai.provider.name` of the `invoke_agent` and `chat` spans, as the conventions name the providers:
   * `'openai'`, `'anthropic'`, `'gcp.gemini'`, `'aws.bedrock'`, … (default: the provider's own, else none).
   */
  providerName?: string;
  /**
   * `gen_ai.conversation.id` of every span, inner loops' included: give a conversation's id (the session's,
   * the thread's), so one query finds all its traces, in every process that served it.
   */
  conversationId?: string;
  /**
   * Record the content (default false: it may hold what users said) as the conventions' attributes:
   * `gen_ai.input.messages` and `gen_ai.system_instructions` (what a provider call was sent, as far as the
   * events have told it: not yet at a lone loop's first turn, whose history comes with its first `turn_end`),
   * `gen_ai.output.messages` (its reply; a loop's last), `gen_ai.tool.call.arguments` and
   * `gen_ai.tool.call.result` (a call's input and, when it succeeded, its result).
   */
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
 * Traces never hurt the run (O3): a tracer that throws — from `startSpan` or any span method, at any
 * moment, `end` during an unsubscribe included — is reported to OpenTelemetry's `diag` logger and changes
 * nothing in the run; `unsubscribe()` never throws for it; every span started is ended exactly once.
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
 * its `tool_result`, with `rx_tool_loop.tool.started: false`, so the trace shows what the model asked for;
 * an error result (an unknown tool, a denied call) sets its status to ERROR (O1).
 * A tracer that records nothing (the API without an SDK) gets the `invoke_agent` span alone, and each event
 * then costs one field test (O4); a span that a sampler drops gets none of its attributes or content built.
 *
 * An agent tool (A1) forwards its inner loop's events as the call's `tool_update`s: from them the operator
 * traces the inner loop as the outer one, with `invoke_agent TOOL` (the agent named after the tool) under the
 * call's `execute_tool` span and its `chat` and `execute_tool` spans under that, at any depth; the inner
 * model is the agent tool's `model` (which its updates carry as `details.model`), the provider name and
 * conversation id the outer loop's (trace an inner loop on another provider with a traceLoop of its own).
 * What the inner loop left open ends at the call's `tool_result` (ERROR with the result when it is an error: the inner loop
 * was cut off) or, with the rest, on unsubscribe. An inner loop piped through a recording traceLoop of its own —
 * subscribed inside `toolSpanContext(call)`, or anywhere — is not traced twice: that traceLoop passes each loop's
 * first event on inside an OpenTelemetry context that says so, which the outer one reads at the call's first
 * forwarded event (a context manager must be registered, as the SDKs do, and nothing may put a scheduler between
 * the inner traceLoop and `agentTool`).
 *
 * ```ts
 * import { trace } from '@opentelemetry/api';
 * import { traceLoop } from 'rx-tool-loop/otel';
 *
 * const provider = openAIChatProvider({ model: 'gpt-4o-mini' });
 * runEventedToolLoop({ provider, registry, messages })
 *   // chat spans: `chat gpt-4o-mini`, gen_ai.provider.name 'openai'; every span: the conversation's id
 *   .pipe(traceLoop({ tracer: trace.getTracer('support-bot'), agentName: 'support', provider, conversationId: threadId }))
 *   .subscribe(render);
 * ```
 *
 * @throws TypeError when an option is wrong (no tracer, a name or an id that is not a string), at call time.
 */
export function traceLoop<E extends LoopEvent | ConversationEvent>(options: TraceLoopOptions): MonoTypeOperatorFunction<E> {
  const settings = checkTraceOptions(options);
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
    // O3: the tracer's throws are caught where they happen (GuardedSpan); this is the last guard: whatever
    // recording throws, the run goes on as it would untraced
    let first = false;
    try {
      first = this.spans.observe(event);
    } catch (error) {
      reported(error, 'traceLoop');
    }
    if (first) this.passTraced(event);
    else this.destination.next(event);
  }

  /**
   * The first event of a loop this operator records, passed on inside a context that says the loop is traced
   * (TRACED), so that a traceLoop it reaches forwarded by an agent tool leaves that loop alone (R34: told by
   * OpenTelemetry's own context, not by the event's identity). Live only while the event is passed on: work it
   * starts that runs later (a context manager carries the context into it) never reads it as still true.
   */
  private passTraced(event: E): void {
    const mark: TracedMark = { live: true };
    let passed = false;
    try {
      context.with(context.active().setValue(TRACED, mark), () => {
        passed = true;
        this.destination.next(event);
      });
    } catch (error) {
      reported(error, 'context.with'); // a context manager that throws: the event goes on all the same
      if (!passed) this.destination.next(event);
    } finally {
      mark.live = false;
    }
  }

  protected override _error(error: unknown): void {
    this.ending(() => this.spans.failAll(error));
    super._error(error);
  }

  protected override _complete(): void {
    this.ending(() => this.spans.closeAll());
    super._complete();
  }

  override unsubscribe(): void {
    if (this.closed) return;
    super.unsubscribe(); // the source first: nothing more comes while the spans end
    this.ending(() => this.spans.cancelAll()); // nothing left after an error or a complete: only an unsubscribe cancels
  }

  private ending(end: () => void): void {
    try {
      end();
    } catch (error) {
      reported(error, 'traceLoop');
    }
  }
}

/** An execute_tool span open now; its context is made only when a tool asks for it (toolSpanContext). */
interface OpenTool {
  span: GuardedSpan;
  /** The call as its tool_start told it: its id, name and input are what toolSpanContext goes by. */
  call: ToolCall;
  parent: Context;
  context?: Context;
  /**
   * An agent tool's inner loop (A1), traced from the events its updates forward: made at the first one;
   * `null` when that event came up inside a context that says a traceLoop traces that loop already (TRACED).
   */
  inner?: LoopSpans | null;
}

/** The context of a tool's span, made once: for a tool that asks (toolSpanContext) and for its inner loop. */
function contextOf(open: OpenTool): Context {
  return (open.context ??= trace.setSpan(open.parent, open.span.span));
}

/**
 * R34: an inner loop traced by a traceLoop of its own is not traced twice, wherever that traceLoop was
 * subscribed. The outer traceLoop decides at a call's first forwarded event (an agent tool forwards every inner
 * event from the first, A1); the inner one passes each loop's first event on inside a context holding a live mark.
 */
const TRACED = createContextKey('rx-tool-loop/otel: a traced loop\'s first event');
interface TracedMark {
  live: boolean;
}

/**
 * The execute_tool spans open now, by call id: toolSpanContext(call) has nothing but the call to go by, and
 * its id, name and input are what survive a copy of the event (R34: no state keyed by an object). Written only
 * while a tracer records (never on O4's path); an entry lives from its tool_start to its tool_result.
 */
const openTools = new Map<string, OpenTool[]>();

/**
 * The context of `call`'s `execute_tool` span while a {@link traceLoop} has it open (from its `tool_start`
 * to its `tool_result`), else `undefined`. A tool that runs a loop of its own (a sub-agent) subscribes it
 * inside this context, so the inner loop's `invoke_agent` span is the tool span's child (O1). The span is
 * found by the call's id, name and input (what the handler's `context.call` and its `tool_start` share, even
 * through a copy); two open at once with the same ones (two loops scripted alike) are told apart by the trace
 * active where it is asked (a loop subscribed inside its own request's span, with a context manager), else the
 * one started last is given.
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
  const open = openTools.get(call.id);
  if (open === undefined) return undefined;
  const found = open.length === 1 ? (open[0]!.call.name === call.name ? open[0] : undefined) : theOneOf(open, call);
  return found === undefined ? undefined : contextOf(found);
}

/** Several spans open with `call`'s id: the one of its name and input, in the active trace, else the latest. */
function theOneOf(open: readonly OpenTool[], call: ToolCall): OpenTool | undefined {
  let candidates = open.filter((tool) => tool.call.name === call.name);
  if (candidates.length > 1) {
    const input = json(call.input);
    const same = candidates.filter((tool) => json(tool.call.input) === input);
    if (same.length > 0) candidates = same;
  }
  if (candidates.length > 1) {
    const active = traceIdOf(context.active());
    const here = active === undefined ? [] : candidates.filter((tool) => traceIdOf(tool.parent) === active);
    if (here.length > 0) candidates = here;
  }
  return candidates.at(-1);
}

/** The trace of a context's span, if it has one (a tracer's span that throws is no trace). */
function traceIdOf(of: Context): string | undefined {
  try {
    return trace.getSpanContext(of)?.traceId;
  } catch (error) {
    reported(error, 'spanContext');
    return undefined;
  }
}

interface TraceSettings {
  tracer: Tracer;
  recordContent: boolean;
  providerName: string | undefined;
  conversationId: string | undefined;
  // made once: every loop's and every reply's span starts with the same name, kind and attributes
  agent: { name: string; options: SpanOptions };
  chat: { name: string; options: SpanOptions };
  /** What every execute_tool span carries besides its call's own: the conversation id. */
  tool: Attributes;
  /** The settings of agent tools' inner loops, by tool name and model: made at a call's first forwarded event. */
  inner: Map<string, TraceSettings>;
}

/** R20's way: checked and copied at call time, so changing the options object later changes nothing. */
function checkTraceOptions(options: TraceLoopOptions): TraceSettings {
  if (options === null || typeof options !== 'object') throw new TypeError(`traceLoop: options must be an object, got ${shown(options)}`);
  const { tracer, agentName, provider, conversationId, recordContent } = options;
  if (tracer === null || typeof tracer !== 'object' || typeof tracer.startSpan !== 'function') {
    throw new TypeError(`traceLoop: tracer must be an OpenTelemetry Tracer (with startSpan), got ${shown(tracer)}`);
  }
  if (provider !== undefined && (provider === null || (typeof provider !== 'object' && typeof provider !== 'function'))) {
    throw new TypeError(`traceLoop: provider must be the loop's provider (a function), got ${shown(provider)}`);
  }
  for (const [name, value] of [['agentName', agentName], ['model', options.model], ['providerName', options.providerName], ['conversationId', conversationId]] as const) {
    if (value !== undefined && typeof value !== 'string') throw new TypeError(`traceLoop: ${name} must be a string, got ${shown(value)}`);
  }
  // the provider's own, when it names itself: a provider that does not (a scripted one) gives nothing
  const named = provider as { readonly providerName?: unknown; readonly model?: unknown } | undefined;
  const own = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const model = options.model ?? own(named?.model);
  const providerName = options.providerName ?? own(named?.providerName);
  if (recordContent !== undefined && typeof recordContent !== 'boolean') {
    throw new TypeError(`traceLoop: recordContent must be a boolean, got ${shown(recordContent)}`);
  }
  return settingsOf(tracer, agentName, model, providerName, conversationId, recordContent === true);
}

function settingsOf(
  tracer: Tracer,
  agentName: string | undefined,
  model: string | undefined,
  providerName: string | undefined,
  conversationId: string | undefined,
  recordContent: boolean,
): TraceSettings {
  const agentAttributes: Attributes = { 'gen_ai.operation.name': 'invoke_agent' };
  const chatAttributes: Attributes = { 'gen_ai.operation.name': 'chat' };
  const toolAttributes: Attributes = {};
  if (agentName !== undefined) agentAttributes['gen_ai.agent.name'] = agentName;
  if (model !== undefined) agentAttributes['gen_ai.request.model'] = chatAttributes['gen_ai.request.model'] = model;
  if (providerName !== undefined) agentAttributes['gen_ai.provider.name'] = chatAttributes['gen_ai.provider.name'] = providerName;
  if (conversationId !== undefined) {
    agentAttributes['gen_ai.conversation.id'] = chatAttributes['gen_ai.conversation.id'] = toolAttributes['gen_ai.conversation.id'] = conversationId;
  }
  return {
    tracer,
    recordContent,
    providerName,
    conversationId,
    agent: { name: agentName === undefined ? 'invoke_agent' : `invoke_agent ${agentName}`, options: { kind: SpanKind.INTERNAL, attributes: Object.freeze(agentAttributes) } },
    chat: { name: model === undefined ? 'chat' : `chat ${model}`, options: { kind: SpanKind.CLIENT, attributes: Object.freeze(chatAttributes) } },
    tool: Object.freeze(toolAttributes),
    inner: new Map(),
  };
}

/**
 * An agent tool's inner loop: the agent is named after the tool, its model is the one the tool's updates
 * carry (`agentTool`'s `model`, as `details.model`); provider and conversation are the outer loop's.
 */
function innerSettings(settings: TraceSettings, toolName: string, model: string | undefined): TraceSettings {
  const key = model === undefined ? toolName : `${toolName}\u0000${model}`;
  let inner = settings.inner.get(key);
  if (inner === undefined) {
    inner = settingsOf(settings.tracer, toolName, model, settings.providerName, settings.conversationId, settings.recordContent);
    settings.inner.set(key, inner);
  }
  return inner;
}

/**
 * The open spans of one subscription: its current loop's, its current provider call's, its running tools'
 * and, under an agent tool's span, its inner loop's (another LoopSpans, fed the events the tool forwards).
 */
class LoopSpans {
  private agent: GuardedSpan | undefined;
  private agentContext: Context | undefined;
  private chat: GuardedSpan | undefined;
  // the running calls (ids unique within a turn, R28): a few at a time, so a list beats a Map here
  private tools: OpenTool[] = [];
  private off = false; // the tracer records nothing (openAgent)
  // recordContent, and the chat span records: the reply so far, for its output messages (none built for a span that drops it)
  private content = false;
  private reasoning = '';
  private text = '';
  private calls: ToolCall[] = [];
  // recordContent: the history as the events last told it (a prompt's, a turn's end), and the loop's own input
  private history: readonly AgentMessage[] | undefined;
  private loopInput: readonly AgentMessage[] | undefined;
  private turnsEnded = 0;

  constructor(
    private readonly settings: TraceSettings,
    /** The context active at subscribe: every loop's `invoke_agent` span is its child. */
    private readonly parent: Context,
  ) {}

  /**
   * An event of the traced source itself: recorded. True for the first event of a loop it records, which is
   * passed on marked (TRACED).
   */
  observe(event: LoopEvent | ConversationEvent): boolean {
    if (this.agent !== undefined) {
      // O4: the loop's span records nothing, so neither would any other: only its end is left to do
      if (this.off) {
        if (event.type === 'loop_end') this.endOffLoop();
      } else this.record(event);
      return false;
    }
    this.record(event); // opens the loop's span (a loop_end alone opens and ends it)
    return !this.off && (this.agent !== undefined || event.type === 'loop_end');
  }

  record(event: LoopEvent | ConversationEvent): void {
    switch (event.type) {
      case 'user_message':
        if (this.settings.recordContent) this.history = event.messages;
        this.openAgent();
        return;
      case 'turn_start':
        this.openAgent();
        if (event.turn >= 1 && !this.off) this.openChat(event.turn); // turn 0 resumes a saved history: no provider call
        return;
      case 'loop_end':
        this.endLoop(event.reason, event.assistant, event.usage);
        return;
    }
    if (this.off) return; // O4: a tracer that records nothing gets the invoke_agent span alone
    switch (event.type) {
      case 'text_delta':
        if (this.content) this.text += event.text;
        return;
      case 'reasoning_delta':
        if (this.content) this.reasoning += event.text;
        return;
      case 'tool_call':
        if (this.content) this.calls.push(event.call);
        return;
      case 'message_end':
        // L1: the model that answered (withFallback names the one it fell back to)
        if (event.model !== undefined) this.chat?.setAttribute('gen_ai.response.model', event.model);
        this.endChat(event.stopReason, event.errorMessage, event.usage);
        return;
      case 'tool_approval':
        // H8: the call's own span starts at its tool_start, if it runs: the wait is a moment of the loop's
        this.agent?.addEvent('rx_tool_loop.tool_approval', { 'gen_ai.tool.name': event.call.name, 'gen_ai.tool.call.id': event.call.id });
        return;
      case 'tool_start':
        this.startTool(event.call);
        return;
      case 'tool_result':
        this.endTool(event.message);
        return;
      case 'tool_update':
        if (event.event !== undefined) this.forward(event.toolCallId, event.event, event.details);
        return;
      case 'turn_end':
        // a provider that failed, or an abort, ends the reply without a message_end: the turn's assistant says how
        this.endChatWith(event.assistant);
        if (this.settings.recordContent) this.turnEnded(event.turn, event.messages, event.toolResults.length);
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
    const open: GuardedSpan[] = [];
    const tools = this.tools;
    this.tools = [];
    for (const tool of tools) {
      unlist(tool);
      open.push(tool.span);
    }
    if (this.chat !== undefined) open.push(this.chat);
    if (this.agent !== undefined) open.push(this.agent);
    this.chat = undefined;
    this.agent = undefined;
    this.agentContext = undefined;
    this.content = false;
    // an inner loop's spans end before its tool's
    for (const tool of tools) tool.inner?.endOpen(attributes, errorMessage);
    for (const span of open) {
      if (attributes !== NO_ATTRIBUTES) span.setAttributes(attributes);
      if (errorMessage !== undefined) span.fail(errorMessage);
      span.end();
    }
  }

  /** A loop's first event opens its span: in a conversation, the first after the last loop's `loop_end`. */
  private openAgent(): void {
    if (this.agent !== undefined) return;
    const { tracer, agent } = this.settings;
    const span = GuardedSpan.start(tracer, agent.name, agent.options, this.parent);
    // no SDK behind the tracer (a span that records nothing and has no valid context): tracing is off, and
    // a reply's or a call's span would be as empty, so none is made; the events go straight through (O4)
    this.off = span.off;
    this.agent = span;
    this.turnsEnded = 0;
    this.loopInput = this.history;
    if (!this.off) this.agentContext = trace.setSpan(this.parent, span.span);
  }

  /** O4: the `loop_end` of a loop whose span records nothing: that span ends, alone (nothing else opened). */
  private endOffLoop(): void {
    const agent = this.agent!;
    this.agent = undefined;
    agent.end();
  }

  /**
   * recordContent: a turn's end tells the history, the next provider call's input; the first of a lone loop
   * (no prompt told it before) tells the loop's input too: its history without the turn's reply and results.
   */
  private turnEnded(turn: number, messages: readonly AgentMessage[], results: number): void {
    if (this.turnsEnded++ === 0 && this.loopInput === undefined && turn >= 1) this.loopInput = messages.slice(0, Math.max(0, messages.length - 1 - results));
    this.history = messages;
  }

  private endLoop(reason: string, assistant: AssistantMessage, usage: Usage): void {
    this.openAgent(); // R7: a loop aborted at subscribe has loop_end as its only event
    this.endChatWith(assistant);
    const agent = this.agent!;
    if (agent.recording) {
      agent.setAttribute('rx_tool_loop.reason', reason);
      agent.setAttributes(usageAttributes(usage));
      if (reason === 'error') agent.fail(assistant.errorMessage ?? 'error');
      if (this.settings.recordContent) {
        if (this.loopInput !== undefined) agent.setAttributes(inputAttributes(this.loopInput));
        agent.setAttributes(outputAttributes('', assistant.content, assistant.toolCalls ?? [], reason));
      }
    }
    this.history = this.loopInput = undefined; // a conversation's next loop starts from its prompt's history
    // every call of the loop has had its result by now (R5); anything left is ended, never leaked
    this.agent = undefined;
    this.endOpen(NO_ATTRIBUTES);
    agent.end();
  }

  private openChat(turn: number): void {
    this.endChat(undefined, undefined, undefined); // never open here: a turn's chat ends by its turn_end
    const { tracer, chat } = this.settings;
    const span = (this.chat = GuardedSpan.start(tracer, chat.name, chat.options, this.agentContext));
    span.setAttribute('rx_tool_loop.turn', turn);
    this.content = this.settings.recordContent && span.recording;
    if (this.content) {
      if (this.history !== undefined) span.setAttributes(inputAttributes(this.history));
      this.reasoning = this.text = '';
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
    if (chat.recording) {
      if (stopReason !== undefined) chat.setAttribute('gen_ai.response.finish_reasons', [stopReason]);
      if (usage !== undefined) chat.setAttributes(usageAttributes(usage));
      if (stopReason === 'error') chat.fail(errorMessage ?? 'error');
    }
    if (this.content) {
      chat.setAttributes(outputAttributes(this.reasoning, this.text, this.calls, stopReason ?? 'unknown'));
      this.content = false;
      this.reasoning = this.text = '';
      this.calls = [];
    }
    chat.end();
  }

  /** `tool_start`: the handler runs now, inside its span (R23). */
  private startTool(call: ToolCall): void {
    const span = this.toolSpan(call.id, call.name);
    const open: OpenTool = { span, call, parent: this.agentContext! };
    this.tools.push(open);
    const same = openTools.get(call.id);
    if (same === undefined) openTools.set(call.id, [open]);
    else same.push(open);
    if (this.settings.recordContent && span.recording) span.setAttribute('gen_ai.tool.call.arguments', json(call.input));
  }

  /** `unstartedAt`: the moment of a call that never ran, its span's start and end. */
  private toolSpan(id: string, name: string, unstartedAt?: number): GuardedSpan {
    this.openAgent();
    const attributes: Attributes = {
      ...this.settings.tool,
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
    return GuardedSpan.start(this.settings.tracer, `execute_tool ${name}`, options, this.agentContext);
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
   * the tool's, at any depth (a forwarded update forwards in turn) — unless a recording traceLoop traces that
   * inner loop already: then its first event, the call's first forwarded one, comes up inside its mark (TRACED).
   */
  private forward(toolCallId: string, event: LoopEvent, details: unknown): void {
    const open = this.findTool(toolCallId);
    if (open === undefined) return;
    if (open.inner === undefined) {
      const traced = (context.active().getValue(TRACED) as TracedMark | undefined)?.live === true;
      open.inner = traced ? null : new LoopSpans(innerSettings(this.settings, open.call.name, modelOf(details)), contextOf(open));
    }
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
    // answered without running (R23: no tool_start): a span of zero length, so the call is still seen (O1)
    const at = open === undefined ? performance.now() : undefined;
    const span = open?.span ?? this.toolSpan(result.toolCallId, result.toolName, at);
    if (span.recording) {
      if (result.isError) span.fail(result.content);
      else if (this.settings.recordContent) span.setAttribute('gen_ai.tool.call.result', result.content);
      // F4: how many, never the bytes (those only in gen_ai.input.messages, with recordContent)
      if (result.attachments !== undefined) span.setAttribute('rx_tool_loop.tool.attachments', result.attachments.length);
    }
    span.end(at);
  }
}

const NO_ATTRIBUTES: Attributes = Object.freeze({});

/** `open` is no longer toolSpanContext's. */
function unlist(open: OpenTool): void {
  const same = openTools.get(open.call.id);
  if (same === undefined) return;
  const index = same.indexOf(open);
  if (index < 0) return;
  if (same.length === 1) openTools.delete(open.call.id);
  else same.splice(index, 1);
}

function usageAttributes(usage: Usage): Attributes {
  const attributes: Attributes = { 'gen_ai.usage.input_tokens': usage.inputTokens, 'gen_ai.usage.output_tokens': usage.outputTokens };
  if (usage.cacheReadTokens !== undefined) attributes['gen_ai.usage.cache_read.input_tokens'] = usage.cacheReadTokens;
  if (usage.cacheWriteTokens !== undefined) attributes['gen_ai.usage.cache_creation.input_tokens'] = usage.cacheWriteTokens;
  return attributes;
}
