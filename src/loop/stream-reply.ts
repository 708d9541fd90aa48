import { Observable, OperatorFunction, Subscription, isObservable } from 'rxjs';
import type { ProviderEvent, ProviderInput, ToolSpec } from '../types.js';
import { firstAnswer } from '../util/first-answer.js';
import { LazyAbort } from '../util/lazy-abort.js';
import { HeldSubscriber } from '../util/held-subscriber.js';
import { Relay } from '../util/relay.js';
import { errorText, isPlainObject, shown } from '../util/values.js';
import { CallSlots } from './call-slots.js';
import { Reply } from './reply.js';
import { checkMessages } from './check-messages.js';
import { EventOrder, ProviderProtocolError } from './event-order.js';
import type { LoopSettings } from './loop-options.js';
import type { TurnPart, TurnRequest } from './turn-parts.js';

/**
 * The turn's first phase: for each request, the reply — `begin`, then the provider's events as they arrive
 * (R2), each `tool_call` as a `call` with its slot (R28). It asks the registry for the tools and, with a
 * `prepareTurn` (H6), waits for the model's view of the turn before it calls the provider. It never errors: a
 * provider that throws, returns no Observable, errors or breaks the event order (R10, R20), a broken registry
 * or a failing prepareTurn send `failed` naming the cause, and the reply ends there. A request that resumes
 * (turn 0, R22) asks no model. Unsubscribing closes the provider call and prepareTurn's answer.
 *
 * ```text
 * request:    r|
 * provider:   -s-t-c-e|             s = message_start, t = text_delta, c = tool_call, e = message_end
 * streamReply: b-s-t-C-e|           b = begin, C = call (the slot of c)
 * provider:   -s-#
 * streamReply: b-s-(f|)             f = failed: 'provider error: …'
 * ```
 * (spec/loop/stream-reply.spec.ts)
 */
export function streamReply(loop: LoopSettings): OperatorFunction<TurnRequest, TurnPart> {
  return (requests) =>
    new Observable<TurnPart>((subscriber) => {
      const reply = new Reply();
      let call: Subscription | undefined; // the provider call, or prepareTurn's answer
      const stop = () => call?.unsubscribe();

      const fail = (error: unknown, what = 'provider error: ') => {
        stop();
        if (subscriber.closed) return;
        reply.fail(error instanceof ProviderProtocolError ? error.message : `${what}${errorText(error)}`);
        subscriber.next({ type: 'failed' });
        subscriber.complete();
      };

      /** One provider call on `input`, its events into the turn (R2), checked as they come (R10). */
      const ask = (input: ProviderInput) => {
        let events: unknown;
        try {
          events = loop.provider(input);
        } catch (error) {
          return fail(error);
        }
        // R20: a provider is a function returning an Observable; anything else ends the reply, named
        if (!isObservable(events)) return fail(new ProviderProtocolError(`provider returned ${shown(events)}, not an Observable`));
        // cancelled while the provider function ran (it aborted the signal, say): do not subscribe
        if (subscriber.closed) return;
        const order = new EventOrder();
        const slots = new CallSlots();
        // held before it subscribes: a consumer that leaves on an event of a synchronous provider closes it at once (C3)
        const held = new HeldSubscriber<ProviderEvent>({
          next(event) {
            let part: TurnPart;
            try {
              const problem = order.accept(event);
              if (problem !== undefined) throw new ProviderProtocolError(problem);
              // the call takes its slot before anyone hears of it: an abort during its delivery still answers it
              if (event.type === 'tool_call') part = slots.add(event);
              else {
                reply.record(event);
                part = event;
              }
            } catch (error) {
              // R20: an event whose fields throw when read (getters) is broken too, and nothing escapes
              return fail(error instanceof ProviderProtocolError ? error : new ProviderProtocolError(`provider sent an event that could not be read: ${errorText(error)}`));
            }
            subscriber.next(part);
          },
          error: (error: unknown) => fail(error),
          complete() {
            const problem = order.complete();
            if (problem !== undefined) return fail(new ProviderProtocolError(problem));
            subscriber.complete();
          },
        });
        call = held;
        try {
          (events as Observable<ProviderEvent>).subscribe(held);
        } catch (error) {
          fail(error); // an Observable of another kind, whose subscribe throws
        }
      };

      const start = (request: TurnRequest) => {
        const { turn, history, resume } = request;
        subscriber.next({ type: 'begin', request, reply });
        // the consumer left at turn_start, or the signal aborted the turn: no model call
        if (subscriber.closed) return;
        // R22, turn 0: no model call; the saved calls without a result run as any turn's do (runTools)
        if (resume !== undefined) return subscriber.complete();
        let specs: unknown;
        try {
          specs = loop.registry.getSpecs();
        } catch (error) {
          return fail(error, 'registry.getSpecs failed: '); // R20: a broken registry ends the turn, named
        }
        if (!Array.isArray(specs)) return fail(new ProviderProtocolError(`registry.getSpecs returned ${shown(specs)}, not an array`));
        const input: ProviderInput = { messages: history.slice(), tools: specs as ToolSpec[] };
        const { prepareTurn } = loop;
        if (prepareTurn === undefined) return ask(input);
        // H6: the model's view of this turn, which may take its time; an abort meanwhile means no model call
        subscriber.next({ type: 'waiting' });
        if (subscriber.closed) return;
        const context = new TurnContext(turn);
        // held before it subscribes: a consumer that leaves while prepareTurn runs closes it, and its signal aborts (C3, H5)
        const held = new HeldSubscriber<ProviderInput>({
          next(prepared) {
            // the loop's own messages, from its own array: the hook may have changed the copy it was given
            const problem = notProviderInput(prepared, history);
            if (problem !== undefined) return fail(problem, 'prepareTurn failed: ');
            subscriber.next({ type: 'asked' });
            if (!subscriber.closed) ask(prepared);
          },
          error: (error: unknown) => fail(error, 'prepareTurn failed: '),
        });
        call = held;
        firstAnswer(() => prepareTurn(input, context), () => context.abort()).subscribe(held);
      };

      // in place before the first event: a consumer that leaves on an event of a synchronous provider closes it at once (C3)
      subscriber.add(stop);
      requests.subscribe(new Relay<TurnRequest>(subscriber, start, noop));
    });
}

function noop(): void {}

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
function notProviderInput(value: unknown, own: readonly import('../types.js').AgentMessage[]): unknown {
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
