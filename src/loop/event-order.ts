import { EMPTY, MonoTypeOperatorFunction, concat, defer, tap, throwError } from 'rxjs';
import type { ProviderEvent, StopReason } from '../types.js';

/** A provider broke the event protocol: the message says how. */
export class ProviderProtocolError extends Error {
  override name = 'ProviderProtocolError';
}

const STOP_REASONS: ReadonlySet<string> = new Set<StopReason>(['stop', 'toolUse', 'length', 'error', 'aborted']);

/**
 * Passes a provider's events through while they follow the protocol — `message_start`, then text,
 * reasoning and argument deltas and tool calls, then `message_end`, then completion — and errors with a
 * `ProviderProtocolError` (unsubscribing the provider) at the first event that does not, or when the
 * provider completes without `message_end` (R10).
 *
 * ```text
 * provider:  -s-t-c-e-|       s = message_start, t = text_delta, c = tool_call, e = message_end
 * checked:   -s-t-c-e-|
 * provider:  -t-s-e|
 * checked:   -#                 "provider sent text_delta before message_start"
 * provider:  -s-t|
 * checked:   -s-t#              "provider completed without message_end"
 * ```
 *
 * ```ts
 * // test a provider of your own the way the loop will read it
 * myProvider(input).pipe(checkProviderEvents()).subscribe({ error: (e) => console.error(e.message) });
 * ```
 */
export function checkProviderEvents(): MonoTypeOperatorFunction<ProviderEvent> {
  return (source) =>
    defer(() => {
      const order = new EventOrder();
      const accept = (event: ProviderEvent) => {
        const problem = order.accept(event);
        if (problem !== undefined) throw new ProviderProtocolError(problem);
      };
      const ended = defer(() => {
        const problem = order.complete();
        return problem === undefined ? EMPTY : throwError(() => new ProviderProtocolError(problem));
      });
      return concat(source.pipe(tap(accept)), ended);
    });
}

type Phase = 'before' | 'open' | 'ended';

/** The protocol as a state machine: each method returns what is wrong, or `undefined`. */
export class EventOrder {
  private phase: Phase = 'before';

  accept(event: ProviderEvent): string | undefined {
    const problem = violation(event, this.phase);
    if (problem === undefined && event.type === 'message_start') this.phase = 'open';
    else if (problem === undefined && event.type === 'message_end') this.phase = 'ended';
    return problem;
  }

  /** Between message_start and message_end: where text may come. */
  get open(): boolean {
    return this.phase === 'open';
  }

  complete(): string | undefined {
    return this.phase === 'ended' ? undefined : 'provider completed without message_end';
  }
}

function violation(event: ProviderEvent, phase: Phase): string | undefined {
  if (typeof event !== 'object' || event === null) return `provider sent ${String(event)}, which is not an event`;
  const type: unknown = event.type;
  switch (type) {
    case 'message_start':
      return phase === 'before' ? undefined : phase === 'open' ? 'provider sent a second message_start' : outOfOrder(type, phase);
    case 'text_delta':
      return phase !== 'open' ? outOfOrder(type, phase) : textProblem((event as { text: unknown }).text);
    case 'reasoning_delta':
      return phase !== 'open'
        ? outOfOrder(type, phase)
        : typeof (event as { text: unknown }).text === 'string'
          ? undefined
          : 'provider sent a reasoning_delta whose text is not a string';
    case 'tool_call_delta': {
      if (phase !== 'open') return outOfOrder(type, phase);
      const { index, argumentsDelta } = event as { index?: unknown; argumentsDelta?: unknown };
      return Number.isInteger(index) && (index as number) >= 0 && typeof argumentsDelta === 'string'
        ? undefined
        : 'provider sent a tool_call_delta without an index >= 0 and a string argumentsDelta';
    }
    case 'tool_call': {
      if (phase !== 'open') return outOfOrder(type, phase);
      const call = (event as { call?: { id?: unknown; name?: unknown } }).call;
      return typeof call?.id === 'string' && typeof call.name === 'string'
        ? undefined
        : 'provider sent a tool_call without a string id and name';
    }
    case 'message_end': {
      if (phase !== 'open') return outOfOrder(type, phase);
      const { stopReason: reason, reasoning } = event as { stopReason: unknown; reasoning?: unknown };
      if (reasoning !== undefined && !Array.isArray(reasoning)) return 'provider sent message_end whose reasoning is not an array';
      return typeof reason === 'string' && STOP_REASONS.has(reason)
        ? undefined
        : `provider sent message_end with an unknown stop reason: ${JSON.stringify(reason) ?? String(reason)}`;
    }
    default:
      return `provider sent an unknown event type: ${JSON.stringify(type) ?? String(type)}`;
  }
}

/** R10: why a text_delta's `text`, read once by the caller, cannot be taken; `undefined` when it can. */
export function textProblem(text: unknown): string | undefined {
  return typeof text === 'string' ? undefined : 'provider sent a text_delta whose text is not a string';
}

function outOfOrder(type: string, phase: Phase): string {
  return phase === 'before' ? `provider sent ${type} before message_start` : `provider sent ${type} after message_end`;
}
