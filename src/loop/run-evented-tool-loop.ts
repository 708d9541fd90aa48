import { Observable, concat, defer, from, mergeMap, of, subscribeOn } from 'rxjs';
import type { AgentMessage, AssistantMessage, ConversationEvent, LoopEndReason, LoopEvent, StandardSchemaV1, Usage, UserMessage, UserMessageEvent } from '../types.js';
import { type AnswerStep, AnswerTurns } from './answer-turns.js';
import { draftTurn } from './draft-turn.js';
import { expandLast } from './expand-last.js';
import { LoopOptions, LoopSettings, checkOptions } from './loop-options.js';
import type { OutputOf } from './output-spec.js';
import { runTools } from './run-tools.js';
import { streamReply } from './stream-reply.js';
import { Trampoline } from './trampoline.js';
import { resumeTurn, savedTurn } from './resume-turn.js';
import { type TurnOutcome, type TurnPart, outcomeOf } from './turn-parts.js';
import { NO_USAGE, copyUsage } from './usage.js';

/**
 * The evented tool loop. Each turn calls the provider once with the history so far and runs the tools
 * it asks for; while a turn ends with stop reason `toolUse`, the next turn starts with the updated
 * history. Ends with exactly one `loop_end`, then completes; never errors. Cold: every subscription is
 * a loop of its own, and unsubscribing cancels the provider call and the running tools.
 *
 * The loop reads `streamReply → runTools → draftTurn → goOn` (R30): the reply streamed, its calls run as they
 * come, the history drafted; the projection `goOn` reads the `turn_end` and decides — the next turn, or the end.
 * Turn 0 of a resumed run has `resumeTurn` for its source instead of `streamReply` (R36). `README.md` here
 * gives the reading order of a turn.
 *
 * ```text
 * turn1:    -s-h-c---i-u|                  s = message_start, h/i = text_delta, c = tool_call,
 * weather:       --------(R|)              u = message_end(toolUse); the tool starts at its call
 * turn2:                 -----s-t-e|       t = text_delta, e = message_end(stop)
 * loop:     1s-h-(cγ)i-u-(RE2)s-t-e(FL|)   1/2 = turn_start, γ = tool_start, R = tool_result, E/F = turn_end, L = loop_end
 * ```
 * (`marbles/03-delayed-tool.marble.ts` runs this very diagram.)
 *
 * ```ts
 * runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'What time is it?' }] })
 *   .pipe(filter((event) => event.type === 'loop_end'))
 *   .subscribe((end) => console.log(end.reason, end.assistant.content));
 * ```
 *
 * With `output` (J1–J4) the loop ends with a typed answer, `loop_end.output`, typed from the schema:
 *
 * ```ts
 * runEventedToolLoop({ provider, registry, messages, output: { schema: z.object({ city: z.string() }) } })
 *   .pipe(filter((event) => event.type === 'loop_end'))
 *   .subscribe((end) => console.log(end.output?.city));
 * ```
 *
 * @throws TypeError or RangeError when an option is wrong (R8, R16, R20, J1), at call time.
 */
export function runEventedToolLoop<S extends StandardSchemaV1 = StandardSchemaV1>(options: LoopOptions<S>): Observable<LoopEvent<OutputOf<S>>> {
  // without steering, no user_message; the answer is what the schema validated (J4)
  return runLoop(checkOptions(options)) as Observable<LoopEvent<OutputOf<S>>>;
}

/**
 * Prompts that join a running loop at a turn boundary (C2, `steer`): subscribed each time the loop goes on
 * to another turn, its values (the prompts waiting at that moment) join the history, as `user_message`
 * events, before that turn starts. It is expected to emit at once, if at all, and complete.
 */
export type Steering = Observable<readonly UserMessage[]>;

/** The loop on checked settings; a conversation runs one per prompt, with its `steering`. */
export function runLoop(loop: LoopSettings, steering?: Steering): Observable<ConversationEvent> {
  return defer(() => {
    // R7: aborted before anything started — no provider call, and the history as the caller gave it
    if (loop.signal?.aborted) return of(loopEnd('aborted', abortedAssistant(), loop.messages.slice(), NO_USAGE));
    const saved = savedTurn(loop.messages); // R22: a run saved while its tools ran starts with turn 0
    // L3: a budget already spent allows no call, not even the first
    if (saved === undefined && isSpent(loop)) return of(loopEnd('budget', unansweredAssistant(loop), loop.messages.slice(), NO_USAGE));
    const history = loop.messages.slice(0, saved?.at); // the loop's own, appended to by each turn
    const turn = turnOf(loop);
    const trampoline = new Trampoline(); // R12, R19: every turn starts from it, turn 1 too, so none nests in another
    // R36: turn 0 is a source of its own, into the same phases
    const first = saved === undefined ? streamReply({ turn: 1, history, usage: NO_USAGE }, loop) : resumeTurn({ turn: 0, history, usage: NO_USAGE }, saved);
    return turn(first).pipe(
      expandLast(projection(turn, loop, steering), trampoline),
      subscribeOn(trampoline),
    );
  });
}

/** A turn of this loop from its source (the model's reply, or turn 0's saved calls): its calls run as they come, the history drafted (R30). */
function turnOf(loop: LoopSettings): (parts: Observable<TurnPart>) => Observable<LoopEvent> {
  const tools = runTools(loop);
  const draft = draftTurn(loop);
  return (parts) => draft(tools(parts));
}

/**
 * The loop's projection, chosen once a loop: `goOn`, or — with `output` — `goOn` with the typed answer deciding where
 * the loop would end (J2, J3), so that a loop without `output` does no work of it at all (W1).
 */
function projection(
  turn: (parts: Observable<TurnPart>) => Observable<LoopEvent>,
  loop: LoopSettings,
  steering: Steering | undefined,
): (last: ConversationEvent) => Observable<ConversationEvent> | undefined {
  if (loop.output === undefined) {
    return (last) => {
      const outcome = turnEnded(last, loop);
      return outcome === undefined ? undefined : goOn(outcome, turn, loop, steering);
    };
  }
  const answers = new AnswerTurns(loop.output); // this run's answer turns
  return (last) => {
    const outcome = turnEnded(last, loop);
    if (outcome === undefined) return undefined;
    const reason = whyStop(outcome, loop);
    // where the loop would end (or an answer turn did), the typed answer decides; otherwise as always
    if (reason !== undefined || answers.answering) {
      const step = answers.after(outcome, reason);
      if (step instanceof Promise) return from(step).pipe(mergeMap((next) => answered(next, outcome, turn, loop, answers)));
      if (step !== undefined) return answered(step, outcome, turn, loop, answers);
    }
    return goOn(outcome, turn, loop, steering);
  };
}

/** The turn's outcome when `last` is its `turn_end`, its provider call charged to the loop's budget (L3) first. */
function turnEnded(last: ConversationEvent, loop: LoopSettings): TurnOutcome | undefined {
  const outcome = last.type === 'turn_end' ? outcomeOf(last) : undefined;
  if (outcome?.lastUsage !== undefined) loop.budget?.charge(outcome.lastUsage); // every provider call, answer turns too
  return outcome;
}

/**
 * The projection: given the outcome on the last turn's `turn_end`, decides what comes next — the
 * next turn or the loop's end. It emits nothing itself; after `loop_end` the loop completes.
 */
function goOn(
  outcome: TurnOutcome,
  turn: (parts: Observable<TurnPart>) => Observable<LoopEvent>,
  loop: LoopSettings,
  steering: Steering | undefined,
): Observable<ConversationEvent> {
  const reason = whyStop(outcome, loop) ?? (isSpent(loop) ? 'budget' : undefined);
  if (reason === undefined) {
    const next = turn(streamReply({ turn: outcome.turn + 1, history: outcome.history, usage: outcome.usage, lastUsage: outcome.lastUsage }, loop));
    // C2: prompts steered in meanwhile join the history when the next turn is subscribed, not here
    return steering === undefined ? next : concat(steering.pipe(mergeMap((prompts) => joined(outcome.history, prompts))), next);
  }
  // aborted between turns: the answer that never came stands in, outside the history
  const abortedBetweenTurns = reason === 'aborted' && outcome.stopReason !== 'aborted';
  return of(loopEnd(reason, abortedBetweenTurns ? abortedAssistant() : outcome.assistant, outcome.history.slice(), outcome.usage));
}

/**
 * J2, J3: the answer's step — the loop's end with the answer (or with `error` when it never matched), or an
 * answer turn: the same phases, asked for the output with no tools, after the prompt (if any) joins the history.
 */
function answered(
  step: AnswerStep,
  outcome: TurnOutcome,
  turn: (parts: Observable<TurnPart>) => Observable<LoopEvent>,
  loop: LoopSettings,
  answers: AnswerTurns,
): Observable<ConversationEvent> {
  const { history, usage } = outcome;
  if (step.kind === 'end') {
    const { reason, output, errorMessage } = step;
    const assistant: AssistantMessage = errorMessage === undefined ? outcome.assistant : { ...outcome.assistant, stopReason: 'error', errorMessage };
    const end = loopEnd(reason, assistant, history.slice(), usage);
    return of('output' in step ? { ...end, output } : end);
  }
  // R11: aborted between turns, as any turn would be — no answer turn
  if (loop.signal?.aborted) return of(loopEnd('aborted', abortedAssistant(), history.slice(), usage));
  // L3: a spent budget allows no call, an answer turn's neither; the last answer kept
  if (isSpent(loop)) return of(loopEnd('budget', outcome.assistant, history.slice(), usage));
  if (step.prompt !== undefined) history.push(step.prompt);
  return turn(streamReply({ turn: outcome.turn + 1, history, usage, lastUsage: outcome.lastUsage, output: answers.request }, loop));
}

/** C2: steered prompts join the loop's own history, each announced with the history up to it. */
function joined(history: AgentMessage[], prompts: readonly UserMessage[]): Observable<UserMessageEvent> {
  return from(
    prompts.map((message): UserMessageEvent => {
      history.push(message);
      return { type: 'user_message', message, messages: history.slice() };
    }),
  );
}

/** R6/R7/R8: `undefined` to go on, otherwise why the loop ends — decided before the next turn exists. */
function whyStop({ stopReason, results, terminated, turn }: TurnOutcome, loop: LoopSettings): LoopEndReason | undefined {
  // R22: after turn 0 the model goes on, unless the tools ended it or the signal did; it is no model call
  if (turn === 0) return terminated ? 'terminated' : loop.signal?.aborted ? 'aborted' : undefined;
  if (stopReason !== 'toolUse' || results === 0) return stopReason;
  if (terminated) return 'terminated';
  if (turn >= loop.maxTurns) return 'maxTurns';
  if (loop.signal?.aborted) return 'aborted';
  return undefined;
}

/** L3: the loop's budget has nothing left: checked before each turn. */
function isSpent(loop: LoopSettings): boolean {
  return loop.budget !== undefined && !(loop.budget.left > 0);
}

/** R22: whether a loop on `messages` starts with turn 0, resuming calls saved while they ran. */
export function resumes(messages: readonly AgentMessage[]): boolean {
  return savedTurn(messages) !== undefined;
}

function loopEnd(reason: LoopEndReason, assistant: AssistantMessage, messages: readonly AgentMessage[], usage: Usage): LoopEvent {
  return { type: 'loop_end', reason, assistant, messages, usage: copyUsage(usage) };
}

/** L3: the answer a spent budget did not ask for: stands in `loop_end` when no call was made. */
function unansweredAssistant({ budget }: LoopSettings): AssistantMessage {
  const errorMessage = `token budget spent: ${budget?.used ?? 0} of ${budget?.maxTokens ?? 0} tokens used`;
  return { role: 'assistant', content: '', stopReason: 'error', errorMessage };
}

/** The answer that never came: stands in `loop_end` when the loop was aborted before or between turns. */
function abortedAssistant(): AssistantMessage {
  return { role: 'assistant', content: '', stopReason: 'aborted', errorMessage: 'aborted' };
}
