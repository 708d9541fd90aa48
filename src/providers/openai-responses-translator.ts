import type { ProviderEvent, Usage } from '../types.js';
import { parseArguments, parseEventData } from './json.js';
import { openAIUsage } from './openai-usage.js';
import type { SseEvent } from './http/sse.js';
import { WireError, WireTranslator, failedEnd, streamFailure } from './http/transport.js';
import { generatedCallId } from './call-id.js';

type MessageEndEvent = Extract<ProviderEvent, { type: 'message_end' }>;
type ToolCallDeltaEvent = Extract<ProviderEvent, { type: 'tool_call_delta' }>;

/** One server-sent event of the Responses API, as far as it is read here (its `type` names it). */
interface ResponsesEvent {
  type?: unknown;
  delta?: unknown;
  item?: unknown;
  item_id?: unknown;
  output_index?: unknown;
  arguments?: unknown;
  refusal?: unknown;
  response?: unknown;
  /** `error` events: the message at the top (the API reference) or in `error` (as the API sends it too). */
  code?: unknown;
  message?: unknown;
  error?: unknown;
}

interface OutputItem {
  type?: unknown;
  id?: unknown;
  call_id?: unknown;
  name?: unknown;
  arguments?: unknown;
  status?: unknown;
}

interface ResponseObject {
  status?: unknown;
  error?: { code?: unknown; message?: unknown } | null;
  incomplete_details?: { reason?: unknown } | null;
  output?: unknown;
  usage?: { input_tokens?: unknown; output_tokens?: unknown; input_tokens_details?: { cached_tokens?: unknown } | null } | null;
}

/** A function call of the reply being put together from its items' events. */
class FunctionCall {
  arguments = '';
  /** Its first `tool_call_delta` went out (P9). */
  announced = false;
  /** Its `tool_call` went out, or it was dropped as cut (P6). */
  done = false;

  constructor(
    /** P9: the call's place in the reply, from 0: the `index` of its `tool_call_delta`s. */
    readonly position: number,
    /** The output item's `id` (`fc_…`) and its place in the reply's output, which its events name. */
    readonly itemId: string | undefined,
    readonly outputIndex: number | undefined,
    public id: string,
    public name: string,
  ) {}
}

/** What `next` returns when an event makes no provider event: shared, never written to. */
const NONE = Object.freeze([]) as unknown as ProviderEvent[];

/**
 * Responses API events → provider events (P14, P15). `response.output_text.delta` is a `text_delta` at once;
 * `response.reasoning_summary_text.delta` (and `response.reasoning_text.delta`, the raw reasoning some
 * servers stream) a `reasoning_delta`. A `function_call` item: each `response.function_call_arguments.delta`
 * is a `tool_call_delta` (P9; the first names the call's `call_id` and `name` from its
 * `response.output_item.added`), and its `response.output_item.done`
 * is its `tool_call` **at once** — its tool starts at the call's last byte while the reply streams on (R3).
 * Each `reasoning` item, as its `response.output_item.done` carries it (with its encrypted content), goes on
 * `message_end.reasoning` (P10). The reply ends at `response.completed` (`toolUse` when it made calls, else
 * `stop`), `response.incomplete` (`max_output_tokens`: `length`, the cut call dropped, P6), `response.failed`
 * or an `error` event (`error`, with the server's message), each `message_end` with the usage the server sent
 * (R27); a refusal ends it with `error`, the refusal as its message (P7). Other events (hosted tools, content
 * parts, annotations) change nothing.
 *
 * ```ts
 * const stream = new OpenAIResponsesTranslator();
 * stream.next({ event: 'response.output_text.delta', data: '{"type":"response.output_text.delta","delta":"Hi"}' }); // [text_delta 'Hi']
 * stream.next({ event: 'response.completed', data: '{"type":"response.completed","response":{"status":"completed"}}' }); // [message_end 'stop']
 * ```
 */
export class OpenAIResponsesTranslator implements WireTranslator {
  private readonly calls: FunctionCall[] = [];
  private callsMade = 0;
  /**
   * Calls held when their item was done — marked incomplete, or arguments that do not parse: the cut call
   * when the reply ends at the token limit (P6), else the reply's error.
   */
  private readonly held: { call: FunctionCall; error: WireError }[] = [];
  /** P7: the refusal deltas, joined; or the refusal a `response.refusal.done` gave. */
  private refusal = '';
  /** P10: the reasoning items, as their `response.output_item.done` carried them. */
  private readonly reasoning: unknown[] = [];
  /** The events of the server-sent event being read. */
  private out: ProviderEvent[] = NONE;

  next({ event, data }: SseEvent): ProviderEvent[] {
    this.out = NONE;
    if (data.length <= 16 && data.trim() === '[DONE]') return NONE; // not the API's, but servers that speak it add one
    const chunk = parseEventData(data) as ResponsesEvent | null;
    if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) throw new WireError(`unexpected data in the stream: ${data.slice(0, 200)}`);
    const type = typeof chunk.type === 'string' ? chunk.type : event;
    switch (type) {
      case 'response.output_text.delta':
        if (typeof chunk.delta === 'string' && chunk.delta !== '') this.push({ type: 'text_delta', text: chunk.delta });
        break;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (typeof chunk.delta === 'string' && chunk.delta !== '') this.push({ type: 'reasoning_delta', text: chunk.delta });
        break;
      case 'response.refusal.delta':
        if (typeof chunk.delta === 'string') this.refusal += chunk.delta;
        break;
      case 'response.refusal.done':
        if (this.refusal === '' && typeof chunk.refusal === 'string') this.refusal = chunk.refusal;
        break;
      case 'response.output_item.added':
        if (isFunctionCall(chunk.item)) this.open(chunk.item, chunk.output_index);
        break;
      case 'response.function_call_arguments.delta':
        this.argumentsDelta(chunk);
        break;
      case 'response.output_item.done':
        if (isFunctionCall(chunk.item)) this.callDone(chunk.item, chunk.output_index);
        else if (isItem(chunk.item) && chunk.item.type === 'reasoning') this.reasoning.push(chunk.item);
        break;
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed':
        this.push(this.messageEnd(type, (chunk.response ?? {}) as ResponseObject));
        break;
      case 'error':
        this.push(failedEnd(`error in the stream: ${codeAndMessage(chunk)}`, streamFailure(chunk.error ?? chunk)));
        break;
      default: // response.created, content parts, annotations, hosted tools…: nothing for the loop
    }
    return this.out;
  }

  end(): ProviderEvent[] {
    throw new WireError('the stream ended before the reply was complete (no response.completed)');
  }

  /** A function call's item begins: the call is known; its first `tool_call_delta` will name its id and name (P9). */
  private open(item: OutputItem, outputIndex: unknown): void {
    // decided P14: without an item id or output_index, each `added` is a call of its own (the same call_id twice: the same item)
    const known = anonymous(item, outputIndex) ? this.byCallId(item) : this.find(item, outputIndex);
    if (known !== undefined) return; // the same item twice
    const call = this.create(item, outputIndex);
    if (typeof item.arguments === 'string' && item.arguments !== '') this.append(call, item.arguments);
  }

  /** P9: a piece of a call's arguments as a `tool_call_delta`; its first names the call's id and name, as far as they are known. */
  private append(call: FunctionCall, argumentsDelta: string): void {
    call.arguments += argumentsDelta;
    const event: ToolCallDeltaEvent = { type: 'tool_call_delta', index: call.position, argumentsDelta };
    if (!call.announced) {
      call.announced = true;
      if (call.id !== '') event.id = call.id;
      if (call.name !== '') event.name = call.name;
    }
    this.push(event);
  }

  private argumentsDelta(chunk: ResponsesEvent): void {
    if (typeof chunk.delta !== 'string' || chunk.delta === '') return; // nothing for the call
    const itemId = typeof chunk.item_id === 'string' ? chunk.item_id : undefined;
    // a server that skipped the item's `added`: the call is known from here, with what is known
    const call = this.find({ id: itemId }, chunk.output_index) ?? this.create({ id: itemId }, chunk.output_index);
    if (call.done) throw new WireError(`tool call ${call.name} (${call.id}) got more arguments after it was complete: ${chunk.delta.slice(0, 100)}`);
    this.append(call, chunk.delta);
  }

  /** P14: the call's item is done: its `tool_call` goes out now, unless the token limit cut it (P6). */
  private callDone(item: OutputItem, outputIndex: unknown): void {
    // decided P14: an anonymous `done` is its call_id's, else the first call still open (calls end in the order they began)
    const found = anonymous(item, outputIndex) ? (this.byCallId(item) ?? this.calls.find((call) => !call.done)) : this.find(item, outputIndex);
    const call = found ?? this.create(item, outputIndex);
    if (call.done) return; // the same item twice
    if (typeof item.call_id === 'string' && item.call_id !== '') call.id = item.call_id;
    if (typeof item.name === 'string' && item.name !== '') call.name = item.name;
    const whole = typeof item.arguments === 'string' ? item.arguments : call.arguments;
    // P9: a call whose arguments came in no delta (only in its done item) still has one before its tool_call
    if (!call.announced) this.append(call, whole);
    call.arguments = whole; // the whole arguments: they win over the deltas
    if (item.status === 'incomplete') {
      call.done = true;
      this.held.push({ call, error: new WireError(`tool call ${call.name || '(no name)'} (${call.id}) ended incomplete`) });
      return;
    }
    this.emit(call);
  }

  private emit(call: FunctionCall): void {
    call.done = true;
    if (call.name === '') throw new WireError(`tool call ${call.id} has no function name`);
    if (call.id === '') call.id = generatedCallId(call.position); // a server that sent no call_id
    let input: Record<string, unknown>;
    try {
      input = parseArguments(call.arguments, call.name, call.id);
    } catch (error) {
      this.held.push({ call, error: error as WireError });
      return;
    }
    this.push({ type: 'tool_call', call: { id: call.id, name: call.name, input } });
    this.callsMade++;
  }

  /**
   * The call an event is about: the one at its `output_index` (unique in a reply; item ids are not to be
   * trusted: GitHub Copilot's proxy gives every event a new one), else the one with its item id, else the last.
   */
  private find(item: { id?: unknown }, outputIndex: unknown): FunctionCall | undefined {
    const { calls } = this;
    for (let n = calls.length - 1; n >= 0; n--) {
      const call = calls[n]!;
      if (typeof outputIndex === 'number' && call.outputIndex !== undefined) {
        if (call.outputIndex === outputIndex) return call;
      } else if (typeof item.id !== 'string' || call.itemId === undefined || call.itemId === item.id) return call;
    }
    return undefined;
  }

  /** The call whose call_id `item` names, if any. */
  private byCallId(item: OutputItem): FunctionCall | undefined {
    const callId = item.call_id;
    return typeof callId === 'string' && callId !== '' ? this.calls.find((call) => call.id === callId) : undefined;
  }

  private create(item: OutputItem, outputIndex: unknown): FunctionCall {
    const call = new FunctionCall(
      this.calls.length,
      typeof item.id === 'string' ? item.id : undefined,
      typeof outputIndex === 'number' ? outputIndex : undefined,
      typeof item.call_id === 'string' ? item.call_id : '',
      typeof item.name === 'string' ? item.name : '',
    );
    this.calls.push(call);
    return call;
  }

  /** The reply's end: `response.completed`, `response.incomplete` or `response.failed`. */
  private messageEnd(type: string, response: ResponseObject): MessageEndEvent {
    const reason = typeof response.incomplete_details?.reason === 'string' ? response.incomplete_details.reason : undefined;
    const cut = type === 'response.incomplete' && reason === 'max_output_tokens';
    if (type !== 'response.failed') this.settleCalls(cut);
    const end: MessageEndEvent =
      type === 'response.failed'
        ? failedEnd(`response failed: ${codeAndMessage(response.error ?? {})}`, streamFailure(response.error))
        : this.refusal !== ''
          ? failedEnd(this.refusal, { kind: 'refusal' }) // P7
          : cut
            ? { type: 'message_end', stopReason: 'length' } // P6, P15
            : type === 'response.incomplete'
              ? failedEnd(incompleteText(reason), { kind: reason === 'content_filter' ? 'refusal' : 'protocol' })
              : { type: 'message_end', stopReason: this.callsMade > 0 ? 'toolUse' : 'stop' };
    const usage = responsesUsage(response.usage);
    if (usage !== undefined) end.usage = usage;
    const reasoning = this.reasoning.length > 0 ? this.reasoning : reasoningItems(response.output);
    if (reasoning.length > 0) end.reasoning = reasoning;
    return end;
  }

  /**
   * The reply finished: a call whose item never said done goes out now, or is dropped when the token limit
   * cut the reply (P6, never a JSON error); so is a held call, which is the reply's error otherwise.
   */
  private settleCalls(cut: boolean): void {
    for (const call of this.calls) {
      if (call.done) continue;
      if (cut) call.done = true;
      else this.emit(call);
    }
    if (this.held.length > 0 && !cut) throw this.held[0]!.error;
  }

  private push(event: ProviderEvent): void {
    if (this.out === NONE) this.out = [event];
    else this.out.push(event);
  }
}

function isItem(value: unknown): value is OutputItem {
  return typeof value === 'object' && value !== null;
}

function isFunctionCall(value: unknown): value is OutputItem {
  return isItem(value) && value.type === 'function_call';
}

/** The reasoning items of a response's `output`: for a server that sent no `response.output_item.done`. */
function reasoningItems(output: unknown): unknown[] {
  return Array.isArray(output) ? output.filter((item) => isItem(item) && item.type === 'reasoning') : [];
}

/** `CODE: MESSAGE` of an `error` event or a failed response's `error`, as much of it as there is. */
function codeAndMessage(error: { code?: unknown; message?: unknown; error?: unknown }): string {
  const inner = typeof error.error === 'object' && error.error !== null ? (error.error as { code?: unknown; message?: unknown }) : undefined;
  const code = typeof error.code === 'string' && error.code !== '' ? error.code : typeof inner?.code === 'string' && inner.code !== '' ? inner.code : undefined;
  const message = typeof error.message === 'string' ? error.message : typeof inner?.message === 'string' ? inner.message : 'no message';
  return code === undefined ? message : `${code}: ${message}`;
}

/** A `response.incomplete` for another reason than the token limit. */
function incompleteText(reason: string | undefined): string {
  if (reason === 'content_filter') return 'response incomplete (content_filter): the content filter cut the reply';
  return `response incomplete (${reason ?? 'no reason given'})`;
}

/** R27: the Responses API's `usage` names its counts `input_tokens`, `output_tokens`, `input_tokens_details`. */
function responsesUsage(raw: ResponseObject['usage']): Usage | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const { input_tokens: input, output_tokens: output, input_tokens_details: details } = raw;
  return openAIUsage(input, output, details);
}

/** An item a server sent with neither an item id nor an `output_index`: only the order of events tells it apart (P14). */
function anonymous(item: { id?: unknown }, outputIndex: unknown): boolean {
  return typeof item.id !== 'string' && typeof outputIndex !== 'number';
}
