import { Observable, Observer, Subscription, isObservable } from 'rxjs';
import { EventOrder, ProviderProtocolError } from '../providers/check-provider-events.js';
import { type ToolSettled, settled } from '../tools/tool-outcome.js';
import { ToolQueue } from '../tools/tool-queue.js';
import { limitOutput, toolErrorMessage } from '../tools/tool-result.js';
import type { AgentMessage, AssistantMessage, LoopEvent, ProviderEvent, ProviderInput, ToolResultMessage, ToolSpec, Usage } from '../types.js';
import { firstAnswer } from '../util/first-answer.js';
import { LazyAbort } from '../util/lazy-abort.js';
import { errorText, isPlainObject, shown } from '../util/values.js';
import { onAbort } from '../util/abort-signal.js';
import { HeldSubscriber } from '../util/held-subscriber.js';
import { checkMessages } from './check-messages.js';
import type { LoopSettings } from './loop-options.js';
import { CallSlot, NO_USAGE, TurnDraft, type TurnOutcome } from './turn-draft.js';

/**
 * One turn, as an Observable of the loop's events: `turn_start`, the events of one provider call as
 * they arrive (R2), the tools' progress and results — each tool started as soon as its `tool_call`
 * arrives (R3) — and, once the provider has finished and every tool has too, `turn_end` with the
 * history after the turn (R4, R5). `turn_end` is its last value; then it completes.
 *
 * ```text
 * provider:  -s-c-----e|           s = message_start, c = tool_call, e = message_end(toolUse)
 * tool:         ----(r|)           starts with c
 * runTurn:   Ts-(cS)r-e(E|)        T = turn_start, S = tool_start (R23), r = tool_result, E = turn_end (spec/loop/run-turn.spec.ts)
 * ```
 *
 * A provider that errors or breaks the event order ends the turn with stop reason `error` (its
 * subscription's `error` callback, below: the provider is not a stream of the turn's own, so there is
 * nothing for `catchError` to replace); the tools it already asked for still finish (R10). The loop's
 * `signal` stops the provider and every tool, and the turn still ends, with stop reason `aborted` (R11).
 * Unsubscribing tears everything down.
 *
 * One hand-written Observable rather than a chain of operators: an agent turn streams many small
 * events, and every operator between the provider and the consumer would cost each of them (bench/).
 * `history` is the loop's own array: the turn appends its messages to it (see `TurnDraft`).
 */
/** R22: what turn 0 resumes — the saved assistant message and the results it already has, by call id. */
export interface Resume {
  assistant: AssistantMessage;
  answered: ReadonlyMap<string, ToolResultMessage>;
}

export function runTurn(
  turn: number,
  history: AgentMessage[],
  loop: LoopSettings,
  usage: Usage = NO_USAGE,
  resume?: Resume,
  report?: (outcome: TurnOutcome) => void,
): Observable<LoopEvent> {
  return new Observable<LoopEvent>((subscriber) => {
    const draft = new TurnDraft(turn, history, usage, loop.maxToolOutputChars);
    const order = new EventOrder();
    let streaming = true; // the provider has not finished yet
    let provider: Subscription | undefined;
    let preparing: Subscription | undefined; // H6: prepareTurn's answer
    let unasked = false; // H6: prepareTurn has not answered yet

    // A consumer may abort while an event is being delivered to it (in a `tap`, say). The turn then
    // ends once that delivery is over, so that its last events do not overtake the one in flight.
    let delivering = 0;
    let endWanted = false;
    const deliver = (event: LoopEvent) => {
      delivering++;
      subscriber.next(event);
      if (--delivering === 0 && endWanted) end();
    };

    let ended = false;
    const end = () => {
      if (streaming || !tools.idle || ended || subscriber.closed) return;
      if (delivering > 0) {
        endWanted = true;
        return;
      }
      ended = true; // an abort while turn_end is being delivered belongs to the loop, not to this turn
      for (const event of draft.finish(report)) subscriber.next(event);
      subscriber.complete();
    };

    const stopStreaming = () => {
      streaming = false;
      preparing?.unsubscribe();
      provider?.unsubscribe();
    };

    // a call's result: into its slot, then out as `tool_result` (R26: cut to maxToolOutputChars first)
    const settle = (index: number, result: ToolSettled) => {
      const message = limitOutput(result.message, loop.maxToolOutputChars);
      draft.settle(index, message === result.message ? result : { ...result, message });
      deliver(draft.resultEvent(message)); // R29: it carries the history to save at this result
    };

    const { beforeToolCall: before, afterToolCall: after } = loop;
    // H2: the hooks are told the history as of the turn's start, which the turn's end must not change
    const hooks = before === undefined && after === undefined ? undefined : { before, after, turn, messages: history.slice(), gone: (): boolean => subscriber.closed || tools.isStopped() };
    const tools = new ToolQueue(
      loop.registry,
      loop.concurrency,
      loop.toolTimeoutMs,
      {
        progress(index, progress) {
          if (progress.type !== 'settled') {
            // a consumer that leaves on hearing of it runs the turn's teardown, in place since the start,
            // which stops the tools: a call at its tool_start never runs its handler (R23)
            deliver(progress);
            return;
          }
          settle(index, progress);
        },
        idle: end,
      },
      hooks,
    );

    // R3: a call starts as soon as it arrives; R28: a repeated id never runs, its result says why
    const startCall = ({ index, call, duplicateOf }: CallSlot) => {
      if (duplicateOf === undefined) return tools.add(call, index);
      settle(index, settled(toolErrorMessage(call, `error: duplicate tool call id: ${duplicateOf}`)));
    };

    const abort = () => {
      if (unasked) draft.abortUnasked();
      else draft.abort();
      stopStreaming();
      tools.stop();
      end();
    };

    // the provider's events, as they arrive
    const providerEvents: Partial<Observer<ProviderEvent>> = {
      next(event) {
        // a synchronous provider can go on emitting after we stopped it, or after the consumer left
        if (!streaming || subscriber.closed) return;
        let slot: CallSlot | undefined;
        try {
          const problem = order.accept(event);
          if (problem !== undefined) throw new ProviderProtocolError(problem);
          // the call takes its slot before anyone hears of it: an abort during its delivery still answers it
          slot = event.type === 'tool_call' ? draft.addCall(event.call) : undefined;
          draft.record(event);
        } catch (error) {
          // R20: an event whose fields throw when read (getters) is broken too, and nothing escapes
          draft.fail(error instanceof ProviderProtocolError ? error : new ProviderProtocolError(`provider sent an event that could not be read: ${errorText(error)}`));
          stopStreaming();
          return end();
        }
        deliver(event);
        if (slot !== undefined && !ended && !subscriber.closed) startCall(slot);
      },
      error(error: unknown) {
        if (!streaming) return;
        draft.fail(error);
        stopStreaming();
        end();
      },
      complete() {
        if (!streaming) return;
        const problem = order.complete();
        if (problem !== undefined) draft.fail(new ProviderProtocolError(problem));
        stopStreaming();
        end();
      },
    };

    /** R10, R20: the provider (or, H6, prepareTurn: `what`) failed before or instead of streaming. */
    const failTurn = (error: unknown, what?: string) => {
      draft.fail(error, what);
      stopStreaming();
      end();
    };

    /** One provider call on `input`, its events into the turn (R2). */
    const ask = (input: ProviderInput) => {
      let events: unknown;
      try {
        events = loop.provider(input);
      } catch (error) {
        return failTurn(error);
      }
      // R20: a provider is a function returning an Observable; anything else ends the turn, named
      if (!isObservable(events)) return failTurn(new ProviderProtocolError(`provider returned ${shown(events)}, not an Observable`));
      // cancelled while the provider function ran (it aborted the signal, say): do not subscribe
      if (!streaming || subscriber.closed) return;
      // held before it subscribes: a consumer that leaves on an event of a synchronous provider closes it at once (C3)
      const held = new HeldSubscriber<ProviderEvent>(providerEvents);
      provider = held;
      try {
        (events as Observable<ProviderEvent>).subscribe(held);
      } catch (error) {
        return failTurn(error); // an Observable of another kind, whose subscribe throws
      }
    };

    let stopListening: (() => void) | undefined;
    const teardown = () => {
      stopStreaming();
      tools.stop();
      stopListening?.();
    };
    // in place before anything is delivered: a consumer that leaves while a synchronous provider or tool
    // is still emitting closes it then and there, not once this function returns (C3)
    subscriber.add(teardown);

    deliver({ type: 'turn_start', turn });
    if (subscriber.closed) return; // the consumer left at turn_start: no model call
    const resumed = resume === undefined ? [] : draft.resume(resume.assistant, resume.answered);
    if (loop.signal !== undefined) stopListening = onAbort(loop.signal, abort);
    if (!streaming) return; // aborted already: no model call

    if (resume !== undefined) {
      // R22, turn 0: no model call; the saved message's calls without a result run as any turn's do.
      // `streaming` stays up while they are added, as while a provider sends calls: a quick tool must
      // not end the turn before the next one is in
      for (const slot of resumed) if (!ended && !subscriber.closed) startCall(slot);
      stopStreaming();
      end();
      return;
    }

    let specs: unknown;
    try {
      specs = loop.registry.getSpecs();
    } catch (error) {
      failTurn(error, 'registry.getSpecs failed: '); // R20: a broken registry ends the turn, named
      return teardown;
    }
    if (!Array.isArray(specs)) {
      failTurn(new ProviderProtocolError(`registry.getSpecs returned ${shown(specs)}, not an array`));
      return teardown;
    }
    const input: ProviderInput = { messages: history.slice(), tools: specs as ToolSpec[] };
    const { prepareTurn } = loop;
    if (prepareTurn === undefined) {
      ask(input);
      return;
    }
    // H6: the model's view of this turn, which may take its time; an abort meanwhile means no model call
    const context = new TurnContext(turn);
    unasked = true;
    // held before it subscribes: a consumer that leaves while prepareTurn runs closes it, and its signal aborts (C3, H5)
    const held = new HeldSubscriber<ProviderInput>({
      next(prepared) {
        // the turn ended while the hook ran (it aborted the signal, the consumer left), before this
        // subscription was in place to be closed: no model call (D10)
        if (!streaming || subscriber.closed) return;
        unasked = false;
        // the loop's own messages, from its own array: the hook may have changed the copy it was given
        const problem = notProviderInput(prepared, history);
        if (problem === undefined) return ask(prepared);
        failTurn(problem, 'prepareTurn failed: ');
      },
      error(error: unknown) {
        if (!streaming || subscriber.closed) return;
        unasked = false;
        failTurn(error, 'prepareTurn failed: ');
      },
    });
    preparing = held;
    firstAnswer(() => prepareTurn(input, context), () => context.abort()).subscribe(held);
  });
}

/** What `prepareTurn` is told (H6); its `signal` is made only if read, and aborts if the turn stops waiting. */
class TurnContext extends LazyAbort {
  constructor(readonly turn: number) {
    super();
  }
}

/**
 * H6: why `value` cannot be a provider's input (R21 for its messages), or `undefined` when it can. Of the loop's
 * own messages (`own`), only their place is checked: they keep the model's calls as it sent them (R17, D7).
 */
function notProviderInput(value: unknown, own: readonly AgentMessage[]): unknown {
  try {
    const { messages, tools } = (isPlainObject(value) ? value : {}) as Partial<ProviderInput>;
    if (!Array.isArray(messages) || !Array.isArray(tools)) {
      return new TypeError(`expected { messages: AgentMessage[], tools: ToolSpec[] }, got ${shown(value)}`);
    }
    checkMessages(messages, '', new Set(own)); // the caller's words, about the messages prepareTurn gave
  } catch (error) {
    return error; // a broken message, or a value whose fields throw when read (R20)
  }
  return undefined;
}
