import { Observable, Subscriber, isObservable } from 'rxjs';
import { eventLine } from '../util/event-line.js';
import { kindOf, shown } from '../util/values.js';
import { forwardedProgress } from './tool-progress.js';
import { ChargedThrough } from '../limits/token-budget.js';
import type { Attachment, JsonSchemaObject, LoopEvent, LoopEventOf, StandardSchemaV1, Tool, ToolContext, ToolOutput, ToolProgressValue } from '../types.js';

/**
 * A sub-agent as a tool (A1–A3): a tool whose run is a whole loop of its own. The inner loop's Observable
 * is subscribed at the call's `tool_start`; each of its events comes up at once as a `tool_update` whose
 * `event` is the inner event and whose `content` is the inner turn's text so far (its `text_delta`s
 * joined) or, for any other event, its `describeEvent` line (the run emits each as a progress value whose plain
 * `event` field carries it, so a copy of the inner events changes nothing: R34). The inner `loop_end` is the result: the
 * inner assistant's content when the reason is `stop` or `terminated`, else the error result
 * `error: sub-agent NAME ended with REASON: MESSAGE`; `details` is `{ reason, messages, usage }` (the inner
 * history and token counts, JSON). F5: a result that succeeded carries, as its `attachments`, those of every result
 * of the inner loop's tools, in the order they came (the inner assistant has none of its own: what its tools
 * made — a screenshot, a chart — is what it hands up); the inner loop's own prompt's attachments stay below. Cancelling the call — the outer loop unsubscribed or aborted, a
 * `toolTimeoutMs` — unsubscribes the inner loop, its provider call and its tools with it (A3); the call's
 * `context.signal`, passed on as the inner loop's `signal`, aborts too (it is the platform's own signal, made
 * when first read: R35). `model` names the inner agent's model: each update then carries it as
 * `details: { model }`, so that a trace names it (O2).
 *
 * ```text
 * turn1:      -s-a-----t----o-------u|                     the outer model: a = tool_call researcher
 * research1:     -----s-c----u|                            the researcher's model, turn 1: c = tool_call search
 * search:               ------(r|)                         its tool
 * research2:                  -----s-t-e|                  the researcher's model, turn 2
 * loop:       1s-(aαP)Mt(CS)oU(QGH)MuT-D(KNRE2)s-y-e(FL|)  α = tool_start researcher; P, M, C, S, … = tool_update
 *                                                          researcher: turn_start 1, message_start, tool_call search,
 *                                                          tool_start search, …; N = … loop_end stop; R = tool_result
 * ```
 * (marbles/28-agent-tool.marble.ts, where the outer model's second turn follows.)
 *
 * ```ts
 * const researcher = agentTool({
 *   name: 'researcher',
 *   description: 'Researches a question on the web and answers it',
 *   input: { question: 'What to find out' },
 *   agent: (input, context) =>
 *     runEventedToolLoop({
 *       provider: smallModel,
 *       registry: new ToolRegistry().register(search),
 *       messages: [{ role: 'user', content: String(input.question) }],
 *       signal: context.signal, // A3: the call's cancellation is the inner loop's
 *     }),
 * });
 * runEventedToolLoop({ provider: planner, registry: new ToolRegistry().register(researcher), messages });
 * ```
 */
export function agentTool<S extends StandardSchemaV1 = never>(definition: {
  name: string;
  description: string;
  input?: Record<string, string>;
  schema?: S;
  inputSchema?: JsonSchemaObject;
  /** The inner agent's model, for traces: every update carries it as `details: { model }` (O2). */
  model?: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  agent: (input: Record<string, any>, context: ToolContext) => Observable<LoopEvent>;
}): Tool {
  if (typeof definition !== 'object' || definition === null) throw new TypeError(`agentTool: the definition must be an object (got ${shown(definition)})`);
  const { name, description, input, schema, inputSchema, model, agent } = definition;
  if (typeof agent !== 'function') throw new TypeError(`agentTool: agent must be a function that returns the inner loop (got ${shown(agent)})`);
  if (model !== undefined && typeof model !== 'string') throw new TypeError(`agentTool: model must be a string (got ${shown(model)})`);
  // made once: the same details on every update
  const details = model === undefined ? undefined : Object.freeze({ model });
  const tool: Tool = {
    name,
    description,
    handler: (given, context) => {
      // L3: the outer budget, counted as the inner loop charges it, so that its loop_end charges only the rest
      const through = context.budget === undefined ? undefined : new ChargedThrough(context.budget);
      const inner = agent(given, through === undefined ? context : withBudget(context, through));
      if (!isObservable(inner)) throw new TypeError(`sub-agent ${name}: agent returned ${kindOf(inner)}, not an Observable of loop events`);
      return forwarded(name, details, inner, through);
    },
  };
  // the spec as given: the registry decides (R24), as for any tool; given none, the sub-agent takes no input
  if (input !== undefined || (schema === undefined && inputSchema === undefined)) tool.input = input ?? {};
  if (schema !== undefined) tool.schema = schema;
  if (inputSchema !== undefined) tool.inputSchema = inputSchema;
  return tool;
}

/** A1, A2: the inner loop's events as progress, its `loop_end` as the result; nothing after it is read. */
function forwarded(
  name: string,
  details: { model: string } | undefined,
  inner: Observable<LoopEvent>,
  budget: ChargedThrough | undefined,
): Observable<ToolProgressValue | ToolOutput> {
  return new Observable<ToolProgressValue | ToolOutput>((subscriber) => inner.subscribe(new Forwarding(name, details, subscriber, budget)));
}

/** The call's context with `budget` for the inner loop: the same call, and the same signal, read when read (R35). */
function withBudget(context: ToolContext, budget: ChargedThrough): ToolContext {
  return {
    call: context.call,
    budget,
    get signal() {
      return context.signal;
    },
  };
}

/**
 * The inner loop's subscriber: each event on as progress, its text so far or its line (A1), the loop_end as
 * the result (A2). A Subscriber of its own rather than an observer object, which rxjs would wrap in two more
 * objects that every inner event passes through (bench W9). Unsubscribed with the call, it closes the inner loop.
 */
class Forwarding extends Subscriber<LoopEvent> {
  /** The inner loop's text of its current turn so far. */
  private text = '';
  /** F5: the attachments of the inner loop's tool results, in the order they came. */
  private attachments: Attachment[] | undefined;

  constructor(
    private readonly name: string,
    private readonly details: { model: string } | undefined,
    out: Subscriber<ToolProgressValue | ToolOutput>,
    private readonly budget: ChargedThrough | undefined,
  ) {
    super(out); // its error and its end are the call's; its teardown the call's too
  }

  protected override _next(event: LoopEvent): void {
    const out = this.destination;
    // a value that is not a loop event fails the call (R9), never as an error thrown from a callback
    let content: string;
    try {
      if (typeof event !== 'object' || event === null) throw new TypeError(`sub-agent ${this.name} emitted ${kindOf(event)}, not a loop event`);
      if (event.type === 'text_delta') content = this.text += event.text;
      else {
        if (event.type === 'tool_result' && event.message.attachments !== undefined) (this.attachments ??= []).push(...event.message.attachments);
        if (event.type === 'turn_start') this.text = '';
        content = eventLine(event);
      }
    } catch (error) {
      this.error(error);
      return;
    }
    out.next(forwardedProgress(content, event, this.details));
    if (event.type === 'loop_end') {
      this.budget?.settle(event.usage); // L3: an inner loop not given the budget is charged now (A2's usage)
      out.next(agentOutput(this.name, event, this.attachments));
      this.complete(); // without a loop_end only progress came: R14's `error: tool produced no result`
    }
  }
}

/** A2: the inner `loop_end` as the call's result; F5: with the attachments of the inner tools' results when it succeeded. */
function agentOutput(name: string, end: LoopEventOf<'loop_end'>, attachments: Attachment[] | undefined): ToolOutput {
  const { reason, assistant, messages, usage } = end;
  const details = { reason, messages, usage };
  if (reason === 'stop' || reason === 'terminated') return attachments === undefined ? { content: assistant.content, details } : { content: assistant.content, attachments, details };
  // a reason without a message of its own (maxTurns, length) says what the inner assistant said, if anything
  const message = assistant.errorMessage ?? assistant.content;
  return { content: `error: sub-agent ${name} ended with ${reason}${message === '' ? '' : `: ${message}`}`, isError: true, details };
}
