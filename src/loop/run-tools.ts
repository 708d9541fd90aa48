import { Observable, OperatorFunction, Subscriber, Subscription, of } from 'rxjs';
import type { ToolHooks } from '../hooks/tool-hooks.js';
import { type ToolProgress, executeTool } from '../tools/execute-tool.js';
import { settled } from '../tools/tool-outcome.js';
import { failureResult, limitOutput, toolErrorMessage } from '../tools/tool-result.js';
import type { Tool, ToolCall } from '../types.js';
import { Relay } from '../util/relay.js';
import type { LoopSettings } from './loop-options.js';
import type { CallPart, TurnPart } from './turn-parts.js';

/**
 * The turn's second phase: every part passes through, and each `call` starts its tool as soon as it has
 * passed (R3) — unless `concurrency` calls are running: then it waits for one to finish (sequential mode
 * is concurrency 1). A tool's `tool_start` and `tool_update`s come out as they happen, its result as
 * `settled` (cut to `maxToolOutputChars`, R26); a repeated id never runs (R28), an unknown tool or a broken
 * registry is answered at once (R9, R20). Hooks, validators and timeouts run inside each call (H1–H5, R16,
 * R24). Completes when its source has and every tool has finished; unsubscribing tears every tool down.
 *
 * ```text
 * parts:     b-C-D-e|              C, D = calls (concurrency 1), e = message_end
 * tool C:       S---(r|)           S = tool_start, r = its result
 * tool D:            S-(r|)        waits for C
 * runTools:  b-CSD-e(rS)-(r|)      r = settled
 * ```
 * (spec/loop/run-tools.spec.ts)
 */
export function runTools(loop: LoopSettings): OperatorFunction<TurnPart, TurnPart> {
  const { registry, concurrency, toolTimeoutMs, maxToolOutputChars, beforeToolCall: before, afterToolCall: after } = loop;
  const hooked = before !== undefined || after !== undefined;
  return (parts) =>
    new Observable<TurnPart>((subscriber) => {
      let hooks: ToolHooks | undefined;
      let sourceDone = false;
      let waiting: CallPart[] = [];
      let head = 0; // waiting[head] is next: `shift()` is O(n) on a long queue
      let active = 0;
      let draining = false;
      let stopped = false;
      // tools inside their synchronous start (nested when one starts another's successor), and those running after it
      const starting: Subscriber<ToolProgress>[] = [];
      let running: Subscription | undefined;

      const idle = () => active === 0 && head === waiting.length;
      const settle = (index: number, message: Parameters<typeof settled>[0], terminate: boolean) => {
        const cut = limitOutput(message, maxToolOutputChars);
        subscriber.next({ type: 'settled', index, result: cut === message ? settled(message, terminate) : settled(cut, terminate) });
      };
      const endIfDone = () => {
        if (sourceDone && idle() && !subscriber.closed) subscriber.complete();
      };

      /** R9, R20: the call's run; a registry whose `get` throws answers the call with the error, named. */
      const run = (call: ToolCall): Observable<ToolProgress> => {
        let tool: Tool | undefined;
        try {
          tool = registry.get(call.name);
        } catch (error) {
          return of(settled(failureResult(call, error, 'registry.get failed: ')));
        }
        return executeTool(tool, call, toolTimeoutMs, hooks);
      };

      const start = ({ call, index }: CallPart) => {
        active++;
        // held before it subscribes, so that stopping closes a tool still inside its synchronous start at
        // once (C3: a consumer that leaves on its tool_start, R23: its handler never runs)
        const tool = new ToolSubscriber((progress) => {
          if (progress.type === 'settled') settle(index, progress.message, progress.terminate);
          else subscriber.next(progress);
        }, () => {
          active--;
          drain();
          endIfDone();
        });
        starting.push(tool);
        try {
          run(call).subscribe(tool);
        } finally {
          starting.pop();
        }
        // a synchronous tool never joins `running`: no add and remove per call (W1)
        if (!tool.closed) (running ??= new Subscription()).add(tool);
      };

      /**
       * Starts waiting calls while there is room. A synchronous tool finishes inside `start` and calls
       * `drain` again: that nested call returns at once and this loop goes on, so a long queue of
       * synchronous calls keeps a flat stack.
       */
      const drain = () => {
        if (draining) return;
        draining = true;
        while (!stopped && active < concurrency && head < waiting.length) start(waiting[head++]!);
        if (head === waiting.length) {
          waiting = [];
          head = 0;
        }
        draining = false;
      };

      const take = (part: TurnPart) => {
        if (part.type === 'begin') {
          const { request } = part;
          // H2: the hooks are told the history as of the turn's start, which the turn's end must not change
          if (hooked) hooks = { before, after, turn: request.turn, messages: request.history.slice() };
          subscriber.next(part);
          // R22, turn 0: the saved calls without a result run as any turn's do
          if (request.resume !== undefined) for (const call of request.resume.calls) if (!subscriber.closed && call.answered === undefined) add(call);
          return;
        }
        subscriber.next(part);
        if (part.type === 'call' && !subscriber.closed) add(part);
      };
      const add = (part: CallPart) => {
        if (part.duplicateOf !== undefined) return settle(part.index, toolErrorMessage(part.call, `error: duplicate tool call id: ${part.duplicateOf}`), false);
        waiting.push(part);
        drain();
      };

      // in place before anything is delivered: a consumer that leaves while a tool is still inside its
      // synchronous start closes it then and there, not once this function returns (C3)
      subscriber.add(() => {
        stopped = true;
        waiting = [];
        head = 0;
        for (const tool of starting) tool.unsubscribe();
        running?.unsubscribe();
      });
      parts.subscribe(
        new Relay<TurnPart>(subscriber, take, () => {
          sourceDone = true;
          endIfDone();
        }),
      );
    });
}

/** One call's subscriber: its progress to `progress`, its end to `done` (not after it was closed from outside). */
class ToolSubscriber extends Subscriber<ToolProgress> {
  constructor(
    private readonly progress: (progress: ToolProgress) => void,
    private readonly done: () => void,
  ) {
    super();
  }

  protected override _next(progress: ToolProgress): void {
    this.progress(progress);
  }

  protected override _complete(): void {
    const { done } = this;
    this.unsubscribe();
    done();
  }
}
