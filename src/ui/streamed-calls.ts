import type { ToolCall } from '../types.js';

/** What to send for a call: its start (once its id and name are known) and argument text (`''`: none). */
export interface CallStep {
  id: string;
  start?: { name: string };
  text: string;
}

/** One call of a reply as it streams: its id and name once known, its arguments, those held until its start. */
interface StreamedCall {
  id?: string;
  name?: string;
  started: boolean;
  ended: boolean;
  args: string;
  held: string;
}

/**
 * P9's streamed calls, kept once for both front-end protocols (U1, U2): a call is keyed by its `index`, its
 * arguments are held until both its id and its name are known, then it starts with the held text, and the rest
 * follows as it comes. It decides what to start and which text to send; each operator emits in its protocol.
 *
 * ```text
 * delta(0, -, -, '{')          nothing: held until the id and the name are known
 * delta(0, 'a', 'f', '"x":1')  { id: 'a', start: { name: 'f' }, text: '{"x":1' }
 * delta(0, -, -, '}')          { id: 'a', text: '}' }
 * ```
 */
export class StreamedCalls {
  /** The reply's calls, in the order they began, and those that streamed by their index. */
  private calls: StreamedCall[] = [];
  private readonly byIndex = new Map<number, StreamedCall>();

  /** One `tool_call_delta`: what to send, or nothing while the call waits for its id and name (or has ended). */
  delta(index: number, id: string | undefined, name: string | undefined, text: string): CallStep | undefined {
    let call = this.byIndex.get(index);
    if (call === undefined) {
      call = { started: false, ended: false, args: '', held: '' };
      this.byIndex.set(index, call);
      this.calls.push(call);
    }
    if (call.ended) return undefined;
    call.id ??= id;
    call.name ??= name;
    call.args += text;
    if (call.started) return { id: call.id as string, text };
    call.held += text;
    if (call.id === undefined || call.name === undefined) return undefined;
    return this.start(call, call.id, call.name);
  }

  /**
   * A call came whole (its `tool_call`): its streamed pieces — by its id, else the first without one (P9: a provider
   * may send ids late) — end. What to send (its start with its input's text if it did not stream), and the
   * arguments that streamed, to hold against its input.
   */
  whole(done: ToolCall): { step: CallStep; args: string } {
    let call = this.calls.find((c) => c.id === done.id && !c.ended) ?? this.calls.find((c) => c.id === undefined && !c.ended);
    if (call === undefined) {
      call = { started: false, ended: false, args: '', held: '' };
      this.calls.push(call);
    }
    call.id = done.id;
    call.ended = true;
    if (call.started) return { step: { id: done.id, text: '' }, args: call.args };
    if (call.args === '') call.held = call.args = JSON.stringify(done.input);
    return { step: this.start(call, done.id, done.name), args: call.args };
  }

  /** The reply is over: forgets its calls, and gives the ids of those started but not ended (cut before their `tool_call`). */
  clear(): string[] {
    const cut = this.calls.filter((call) => call.started && !call.ended).map((call) => call.id as string);
    this.calls = [];
    this.byIndex.clear();
    return cut;
  }

  private start(call: StreamedCall, id: string, name: string): CallStep {
    call.started = true;
    const text = call.held;
    call.held = '';
    return { id, start: { name }, text };
  }
}
