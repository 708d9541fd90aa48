/**
 * What CONTRACT.md says a scenario must produce, computed without rxjs: the reference model for the
 * model-based property. It covers scenarios without cancellation whose timing cannot race (virtual
 * time, where tool durations are even and timeouts odd, so they never tie).
 */
import type { AgentMessage, AssistantMessage, LoopEndReason, ToolResultMessage } from '../../../src/index.js';
import {
  CallSpec,
  DEFAULT_MAX_TURNS,
  Out,
  Scenario,
  Thrown,
  initialMessages,
  inputIsPlainObject,
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
  /** does the handler run at all (not for unknown tools, invalid or missing input) */
  runs: boolean;
}

export interface ExpectedRun {
  reason: LoopEndReason;
  history: AgentMessage[];
  turns: number;
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

/** What the loop must make of one call (R9, R14, R16, R17, R28), and the progress it reports. */
export function expectedCall(scenario: Scenario, call: CallSpec): ExpectedCall {
  const message = (o: Outcome): ToolResultMessage => {
    const m = { role: 'toolResult', toolCallId: keptId(call), toolName: call.name, content: o.content, isError: o.isError } as ToolResultMessage;
    if (o.details !== undefined) m.details = o.details;
    return m;
  };
  const rejected = (content: unknown): ExpectedCall => ({ message: message(failure(content)), terminate: false, updates: [], runs: false });
  if (call.dup !== undefined) return rejected(`error: duplicate tool call id: ${call.id}`);
  if (!isRegistered(scenario, call.name)) return rejected(`unknown tool: ${call.name}`);
  if (!inputIsPlainObject(call.input)) return rejected(startsWith('error: invalid input'));
  if (call.name === 'needs' && (call.input === 'missing' || call.input === 'undefinedKey')) return rejected('error: missing input: key');

  const timeout = scenario.toolTimeoutMs ?? Infinity;
  const timedOut = failure(`error: tool timed out after ${timeout} ms`);
  const done = (o: Outcome, updates: string[] = []): ExpectedCall => ({ message: message(o), terminate: o.terminate, updates, runs: true });
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

    if (assistant.stopReason !== 'toolUse' || results.length === 0) return { reason: assistant.stopReason, history, turns: turn, calls };
    if (results.every((r) => r.terminate)) return { reason: 'terminated', history, turns: turn, calls };
    if (turn >= maxTurns) return { reason: 'maxTurns', history, turns: turn, calls };
  }
}
