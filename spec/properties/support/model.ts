/**
 * What CONTRACT.md says a scenario must produce, computed without rxjs: the reference model for the
 * model-based property. It covers scenarios without cancellation whose timing cannot race (virtual
 * time, where tool durations are even and timeouts odd, so they never tie).
 */
import type { AgentMessage, AssistantMessage, LoopEndReason, ToolResultMessage } from '../../../src/index.js';
import {
  CallSpec,
  DEFAULT_MAX_TURNS,
  Decision,
  HookAnswer,
  InputKind,
  KEEP_AFTER,
  Out,
  PASS_BEFORE,
  PASS_PREPARE,
  Preparation,
  Replacement,
  Scenario,
  Thrown,
  initialMessages,
  inputOf,
  inputProblem,
  isRegistered,
  keptId,
  toolCallOf,
  turnScript,
  turnSpec,
} from './scenario.js';

export interface ExpectedCall {
  message: ToolResultMessage;
  terminate: boolean;
  updates: string[];
  /** does the handler run at all (not for unknown tools, invalid or missing input, duplicates, nor when beforeToolCall says so) */
  runs: boolean;
  /** H2: is beforeToolCall asked for it */
  asked: boolean;
  /** H3: what afterToolCall sees, when it is asked */
  afterSees?: ToolResultMessage;
  /** H2: the input the handler runs on (and tool_start carries) when beforeToolCall rewrote it */
  startInput?: unknown;
}

export interface ExpectedRun {
  reason: LoopEndReason;
  history: AgentMessage[];
  turns: number;
  /** H6: a turn whose prepareTurn failed makes no provider call */
  providerCalls: number;
  calls: Map<string, ExpectedCall>;
}

const startsWith = (prefix: string) => expect.stringMatching(new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));

function thrownText(thrown: Thrown, message: string): string {
  switch (thrown) {
    case 'Error':
    case 'string':
      return message;
    case 'object':
      return JSON.stringify({ reason: message });
    case 'undefined':
      return 'undefined';
  }
}

interface Outcome {
  content: unknown;
  isError: boolean;
  terminate: boolean;
  details?: unknown;
}

function outcomeOf(out: Out): Outcome {
  switch (out.kind) {
    case 'string':
      return { content: out.content, isError: false, terminate: false };
    case 'output': {
      const outcome: Outcome = { content: out.content, isError: out.isError, terminate: out.terminate };
      if (out.details !== undefined) outcome.details = out.details;
      return outcome;
    }
    case 'bad':
      return caused(startsWith('error: tool returned'));
  }
}

const failure = (content: unknown): Outcome => ({ content, isError: true, terminate: false });
/** R25: a failure of the tool's own code keeps its cause in `details.error`; the loop's own texts (unknown tool, timeout, …) do not. */
const caused = (content: unknown): Outcome => ({
  ...failure(content),
  details: { error: expect.objectContaining({ name: expect.any(String), message: expect.any(String) }) },
});

function resultMessage(id: string, name: string, o: Outcome): ToolResultMessage {
  const m = { role: 'toolResult', toolCallId: id, toolName: name, content: o.content, isError: o.isError } as ToolResultMessage;
  if (o.details !== undefined) m.details = o.details;
  return m;
}

/** R9, R17: the result of an input the loop's check refuses. */
const refused = (problem: 'invalid' | 'missing'): Outcome => failure(problem === 'invalid' ? startsWith('error: invalid input') : 'error: missing input: key');

/** H2: what beforeToolCall's answer makes of a known, valid call: it runs (on the input of kind `input`), or it has its result without running. */
export type BeforeOutcome = { runs: true; input: InputKind; rewritten: boolean } | { runs: false; message: ToolResultMessage; terminate: boolean };

export function beforeOutcome(call: CallSpec, answer: HookAnswer<Decision>): BeforeOutcome {
  const result = (o: Outcome): BeforeOutcome => ({ runs: false, message: resultMessage(keptId(call), call.name, o), terminate: o.terminate });
  switch (answer.kind) {
    case 'error':
      return result(caused(`error: beforeToolCall failed: ${answer.message}`));
    case 'empty':
      return result(caused('error: beforeToolCall failed: completed without a value'));
    case 'never':
      throw new Error('model: a hook that never answers has no outcome');
  }
  const decision = answer.value;
  switch (decision.kind) {
    case 'pass':
    case 'run':
      return { runs: true, input: call.input, rewritten: false };
    case 'rewrite': {
      // checked again (R9, R17), as the model's own input would be
      const problem = inputProblem(call.name, decision.input);
      return problem === undefined ? { runs: true, input: decision.input, rewritten: true } : result(refused(problem));
    }
    case 'deny':
      return result(failure(`denied: ${decision.reason}`));
    case 'answer':
      return result(outcomeOf(decision.out));
    case 'bad':
      return result(caused(startsWith('error: beforeToolCall failed: expected')));
  }
}

/** H3: the result afterToolCall's answer makes of `given`; `terminate` undefined: the given result's stays. */
export function afterResult(given: ToolResultMessage, answer: HookAnswer<Replacement>): { message: ToolResultMessage; terminate?: boolean } {
  const replaced = (o: Outcome) => ({ message: resultMessage(given.toolCallId, given.toolName, o), terminate: o.terminate });
  switch (answer.kind) {
    case 'error':
      return replaced(caused(`error: afterToolCall failed: ${answer.message}`));
    case 'empty':
      return replaced(caused('error: afterToolCall failed: completed without a value'));
    case 'never':
      throw new Error('model: a hook that never answers has no outcome');
  }
  const replacement = answer.value;
  switch (replacement.kind) {
    case 'keep':
      return { message: given };
    case 'replace':
      return replaced(outcomeOf(replacement.out));
    case 'bad':
      return replaced(caused(startsWith('error: afterToolCall failed: expected')));
  }
}

/** H6: the turn's error message when prepareTurn fails, or undefined when it gives a ProviderInput. */
export function prepareFailure(answer: HookAnswer<Preparation>): unknown {
  switch (answer.kind) {
    case 'error':
      return `prepareTurn failed: ${answer.message}`;
    case 'empty':
      return 'prepareTurn failed: completed without a value';
    case 'never':
      throw new Error('model: a hook that never answers has no outcome');
    case 'value':
      return answer.value.kind === 'bad' ? startsWith('prepareTurn failed: ') : undefined;
  }
}

/** What the loop must make of one call (R9, R14, R16, R17, R28, H2, H3), and the progress it reports. */
export function expectedCall(scenario: Scenario, call: CallSpec): ExpectedCall {
  const message = (o: Outcome): ToolResultMessage => resultMessage(keptId(call), call.name, o);
  const rejected = (content: unknown): ExpectedCall => ({ message: message(failure(content)), terminate: false, updates: [], runs: false, asked: false });
  if (call.dup !== undefined) return rejected(`error: duplicate tool call id: ${call.id}`);
  if (!isRegistered(scenario, call.name)) return rejected(`unknown tool: ${call.name}`);
  const problem = inputProblem(call.name, call.input);
  if (problem !== undefined) return { ...rejected(''), message: message(refused(problem)) };

  let pre: ExpectedCall = ran(scenario, call, message);
  if (scenario.hooks?.before) {
    const outcome = beforeOutcome(call, (call.before ?? PASS_BEFORE).answer);
    if (!outcome.runs) pre = { message: outcome.message, terminate: outcome.terminate, updates: [], runs: false, asked: true };
    else pre = { ...pre, asked: true, ...(outcome.rewritten ? { startInput: inputOf({ ...call, input: outcome.input }) } : {}) };
  }
  if (!scenario.hooks?.after) return pre;
  const after = afterResult(pre.message, (call.after ?? KEEP_AFTER).answer);
  return { ...pre, afterSees: pre.message, message: after.message, terminate: after.terminate ?? pre.terminate };
}

/** The handler's run (R9, R14, R16): its result and progress. */
function ran(scenario: Scenario, call: CallSpec, message: (o: Outcome) => ToolResultMessage): ExpectedCall {
  const timeout = scenario.toolTimeoutMs ?? Infinity;
  const timedOut = failure(`error: tool timed out after ${timeout} ms`);
  const done = (o: Outcome, updates: string[] = []): ExpectedCall => ({ message: message(o), terminate: o.terminate, updates, runs: true, asked: false });
  const b = call.behaviour;
  switch (b.kind) {
    case 'sync':
      return done(outcomeOf(b.out));
    case 'throw':
      return done(caused(`error: ${thrownText(b.thrown, b.message)}`));
    case 'promise':
      // real mode only; the model is used where no timeout can race
      return done(b.settle === 'resolve' ? outcomeOf(b.out) : caused(`error: ${b.message}`));
    case 'never':
      return done(timedOut);
    case 'subscribeThrows':
      return done(caused(`error: ${b.message}`));
    case 'observable': {
      // every value but the last is progress, and the last is the result; when the tool fails (a bad
      // value, an error, the timeout) the value held back was progress too
      let t = 0;
      const values: Outcome[] = [];
      const failed = (o: Outcome) => done(o, values.map((v) => v.content as string));
      for (const step of b.steps) {
        t += step.delay;
        if (t >= timeout) return failed(timedOut);
        if (step.out.kind === 'bad') return failed(outcomeOf(step.out));
        values.push(outcomeOf(step.out));
      }
      if (b.end === 'never') return failed(timedOut);
      t += b.endDelay;
      if (t >= timeout) return failed(timedOut);
      if (b.end === 'error') return failed(caused('error: stream broke'));
      const last = values[values.length - 1];
      return done(last ?? failure('error: tool produced no result'), values.slice(0, -1).map((v) => v.content as string));
    }
  }
}

/** The whole run, turn by turn (R4, R6, R7, R10). */
export function expectedRun(scenario: Scenario): ExpectedRun {
  const maxTurns = scenario.maxTurns ?? DEFAULT_MAX_TURNS;
  const history: AgentMessage[] = initialMessages(scenario.initial);
  const calls = new Map<string, ExpectedCall>();
  for (let turn = 1; ; turn++) {
    const spec = turnSpec(scenario, turn);
    // H6: a prepareTurn that fails ends the turn like a failing provider, before any provider call
    const unprepared = scenario.hooks?.prepare ? prepareFailure((spec.prepare ?? PASS_PREPARE).answer) : undefined;
    if (unprepared !== undefined) {
      history.push({ role: 'assistant', content: '', stopReason: 'error', errorMessage: unprepared as string });
      return { reason: 'error', history, turns: turn, providerCalls: turn - 1, calls };
    }
    const script = turnScript(spec);
    let text = '';
    const turnCalls: CallSpec[] = [];
    let faulted: string | undefined;
    if (script.throwOnCall) faulted = 'provider error: provider exploded';
    for (const item of script.items) {
      if ('error' in item) {
        faulted = `provider error: ${item.error.message}`;
        break;
      }
      if (!item.valid) {
        faulted = 'protocol';
        break;
      }
      const event = item.event as { type: string; text?: string };
      if (event.type === 'text_delta') text += event.text;
      if (item.call) turnCalls.push(item.call);
    }
    if (faulted === undefined && script.items.every((item) => 'event' in item && (item.event as { type: string }).type !== 'message_end')) {
      faulted = 'protocol'; // completed without message_end
    }
    const assistant: AssistantMessage = { role: 'assistant', content: text, stopReason: faulted ? 'error' : spec.stop };
    // R28: a duplicate is kept under an id of its own
    if (turnCalls.length > 0) assistant.toolCalls = turnCalls.map((call) => ({ ...toolCallOf(call, spec.extraFields), id: keptId(call) }));
    if (faulted) assistant.errorMessage = faulted === 'protocol' ? expect.stringMatching(/^provider /) : faulted;
    else if (spec.errorMessage !== undefined) assistant.errorMessage = spec.errorMessage;

    const results = turnCalls.map((call) => {
      const expected = expectedCall(scenario, call);
      calls.set(keptId(call), expected);
      return expected;
    });
    history.push(assistant, ...results.map((r) => r.message));

    const end = { history, turns: turn, providerCalls: turn, calls };
    if (assistant.stopReason !== 'toolUse' || results.length === 0) return { reason: assistant.stopReason, ...end };
    if (results.every((r) => r.terminate)) return { reason: 'terminated', ...end };
    if (turn >= maxTurns) return { reason: 'maxTurns', ...end };
  }
}
