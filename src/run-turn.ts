import {
  EMPTY,
  Observable,
  catchError,
  concat,
  connect,
  defer,
  filter,
  from,
  map,
  merge,
  mergeMap,
  of,
  takeUntil,
  tap,
} from 'rxjs';
import { fromAbortSignal } from './abort-signal.js';
import { checkProviderEvents } from './check-provider-events.js';
import { executeTool } from './execute-tool.js';
import type { ToolRegistry } from './tool-registry.js';
import { TurnDraft, TurnOutcome } from './turn-draft.js';
import type { AgentMessage, LoopEvent, LoopEventOf, Provider, ProviderEvent } from './types.js';

/** The loop's options, checked once per `runEventedToolLoop` call. */
export interface LoopSettings {
  provider: Provider;
  registry: ToolRegistry;
  maxTurns: number;
  /** How many tools of a turn may run at once: 1 in sequential mode. */
  concurrency: number;
  toolTimeoutMs: number;
  signal: AbortSignal | undefined;
}

/**
 * One turn: `turn_start`, one provider call whose events are re-emitted as they arrive, each tool
 * started as soon as its `tool_call` arrives (R3), then — once the provider has completed and every
 * tool has finished — `turn_end` with the history after the turn (R4, R5). `onEnd` hands the loop
 * what it needs to decide whether to go on.
 *
 * ```text
 * provider:   -s-c-----e|          s = message_start, c = tool_call, e = message_end(toolUse)
 * tool:          ---r|             (starts with c)
 * runTurn:   T-s-c--r--(eE|)       T = turn_start, r = tool_result, E = turn_end
 * ```
 */
export function runTurn(
  turn: number,
  history: AgentMessage[],
  loop: LoopSettings,
  onEnd: (outcome: TurnOutcome) => void,
): Observable<LoopEvent> {
  return defer(() => {
    const draft = new TurnDraft(turn, history);

    // `index` counts the tool calls of this turn: it is the call's place in the history (R4)
    const runTool = (event: LoopEventOf<'tool_call'>, index: number): Observable<LoopEvent> =>
      executeTool(loop.registry.get(event.call.name), event.call, loop.toolTimeoutMs).pipe(
        map((progress): LoopEvent => {
          if (progress.type === 'tool_update') return progress;
          draft.settle(index, progress);
          return { type: 'tool_result', message: progress.message };
        }),
      );

    const streamAndTools = defer(() => loop.provider({ messages: history.slice(), tools: loop.registry.getSpecs() })).pipe(
      checkProviderEvents(),
      tap((event) => draft.record(event)),
      // R10: a failing provider ends the turn; its text and its started tools are kept
      catchError((error: unknown) => {
        draft.fail(error);
        return EMPTY;
      }),
      connect((events) =>
        merge(events, events.pipe(filter(isToolCall), mergeMap(runTool, loop.concurrency))),
      ),
      // R11: the signal tears down the provider and every running tool; the turn still ends
      takeUntil(fromAbortSignal(loop.signal).pipe(tap(() => draft.abort()))),
    );

    const turnEnd = defer(() => {
      const { events, outcome } = draft.finish();
      onEnd(outcome);
      return from(events);
    });

    return concat(of<LoopEvent>({ type: 'turn_start', turn }), streamAndTools, turnEnd);
  });
}

function isToolCall(event: ProviderEvent): event is LoopEventOf<'tool_call'> {
  return event.type === 'tool_call';
}
