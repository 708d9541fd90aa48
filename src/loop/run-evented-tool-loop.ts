import { EMPTY, Observable, expand, ignoreElements, queueScheduler, subscribeOn } from 'rxjs';
import { LoopSettings, runTurn } from './run-turn.js';
import type { TurnOutcome } from './turn-draft.js';
import type { AgentMessage, AssistantMessage, LoopEndReason, LoopEvent, LoopOptions } from '../types.js';

/**
 * The default turn cap, as in the series: at most 8 provider calls per loop.
 *
 * ```ts
 * runEventedToolLoop({ provider, registry, messages, maxTurns: MAX_TURNS * 2 });
 * ```
 */
export const MAX_TURNS = 8;

/**
 * The evented tool loop. Each turn calls the provider once with the history so far and runs the tools
 * it asks for; while a turn ends with stop reason `toolUse`, `expand` starts the next one with the
 * updated history. Ends with exactly one `loop_end`, then completes; never errors. Cold: every
 * subscription is a loop of its own, and unsubscribing cancels the provider call and running tools.
 *
 * ```text
 * turn 1:   -s-h-c-i-u|                    s = message_start, h/i = text_delta, c = tool_call,
 * tool:          --------(R|)              u = message_end(toolUse); the tool starts at its call
 * turn 2:                -----s-t-e|       t = text_delta, e = message_end(stop)
 * loop:     1s-h-c-i-u---(RE2)s-t-e(FL|)   1/2 = turn_start, R = tool_result, E/F = turn_end, L = loop_end
 * ```
 * (`marbles/03-delayed-tool.marble.ts` runs this very diagram.)
 *
 * ```ts
 * runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'What time is it?' }] })
 *   .pipe(filter((event) => event.type === 'loop_end'))
 *   .subscribe((end) => console.log(end.reason, end.assistant.content));
 * ```
 *
 * @throws RangeError when `maxTurns`, `maxConcurrency` or `toolTimeoutMs` is out of range (R8, R16).
 */
export function runEventedToolLoop(options: LoopOptions): Observable<LoopEvent> {
  const loop = checkOptions(options);
  const { messages, signal } = options;

  return new Observable<LoopEvent>((subscriber) => {
    const emit = (event: LoopEvent) => subscriber.next(event);

    // R7: aborted before anything started — no provider call, and the history as the caller gave it
    if (signal?.aborted) {
      emit(loopEnd('aborted', abortedAssistant(), messages.slice()));
      return subscriber.complete();
    }

    // turn → tools → history (inside runTurn) → go on?
    return runTurn(1, messages.slice(), loop, emit)
      .pipe(
        expand((outcome) => {
          const reason = whyStop(outcome, loop);
          if (reason === undefined) {
            // R12: queued, not nested, so that synchronous turns keep a flat stack
            return runTurn(outcome.turn + 1, outcome.history, loop, emit).pipe(subscribeOn(queueScheduler));
          }
          // aborted between turns: the answer that never came stands in, outside the history
          const abortedBetweenTurns = reason === 'aborted' && outcome.assistant.stopReason !== 'aborted';
          const assistant = abortedBetweenTurns ? abortedAssistant() : outcome.assistant;
          emit(loopEnd(reason, assistant, outcome.history.slice()));
          return EMPTY;
        }),
        ignoreElements(),
      )
      // `subscriber` itself, so that a consumer who leaves during the synchronous start is gone at once
      .subscribe(subscriber);
  }).pipe(subscribeOn(queueScheduler));
}

/** R6/R7: `undefined` to go on, otherwise why the loop ends. */
function whyStop({ assistant, toolResults, terminated, turn }: TurnOutcome, loop: LoopSettings): LoopEndReason | undefined {
  if (assistant.stopReason !== 'toolUse' || toolResults.length === 0) return assistant.stopReason;
  if (terminated) return 'terminated';
  if (turn >= loop.maxTurns) return 'maxTurns';
  if (loop.signal?.aborted) return 'aborted';
  return undefined;
}

function loopEnd(reason: LoopEndReason, assistant: AssistantMessage, messages: readonly AgentMessage[]): LoopEvent {
  return { type: 'loop_end', reason, assistant, messages };
}

/** The answer that never came: stands in `loop_end` when the loop was aborted between turns. */
function abortedAssistant(): AssistantMessage {
  return { role: 'assistant', content: '', stopReason: 'aborted', errorMessage: 'aborted' };
}

function checkOptions(options: LoopOptions): LoopSettings {
  if (typeof options !== 'object' || options === null) throw new TypeError('runEventedToolLoop: options must be an object');
  const { provider, registry, messages, maxTurns = MAX_TURNS, toolExecution = 'parallel' } = options;
  const { maxConcurrency = Infinity, toolTimeoutMs = Infinity, signal } = options;
  if (typeof provider !== 'function') throw new TypeError('runEventedToolLoop: provider must be a function');
  if (typeof registry?.get !== 'function' || typeof registry.getSpecs !== 'function') {
    throw new TypeError('runEventedToolLoop: registry must be a ToolRegistry');
  }
  if (!Array.isArray(messages)) throw new TypeError('runEventedToolLoop: messages must be an array');
  if (!Number.isInteger(maxTurns) || maxTurns < 1) {
    throw new RangeError(`runEventedToolLoop: maxTurns must be an integer >= 1 (got ${String(maxTurns)})`);
  }
  if (!isCount(maxConcurrency)) {
    throw new RangeError(`runEventedToolLoop: maxConcurrency must be an integer >= 1 or Infinity (got ${String(maxConcurrency)})`);
  }
  if (!isCount(toolTimeoutMs)) {
    throw new RangeError(`runEventedToolLoop: toolTimeoutMs must be an integer >= 1 or Infinity (got ${String(toolTimeoutMs)})`);
  }
  if (toolExecution !== 'parallel' && toolExecution !== 'sequential') {
    throw new RangeError(`runEventedToolLoop: toolExecution must be 'parallel' or 'sequential' (got ${String(toolExecution)})`);
  }
  return {
    provider,
    registry,
    maxTurns,
    concurrency: toolExecution === 'sequential' ? 1 : maxConcurrency,
    toolTimeoutMs,
    signal,
  };
}

function isCount(value: number): boolean {
  return value === Infinity || (Number.isInteger(value) && value >= 1);
}
