/**
 * Generated scenarios for the property suite: what the provider sends on each turn (with optional
 * faults), what each tool does when it is called, the loop's options and a cancellation. A scenario is
 * plain data; `spec/properties/support/harness.ts` plays it, `spec/properties/support/model.ts` says
 * what the rules (CONTRACT.md) expect of it, and `describeScenario` prints it when a property fails.
 */
import fc from 'fast-check';
import type { AgentMessage, StopReason, ToolCall } from '../../../src/index.js';

/** `virtual`: TestScheduler run mode, delays are frames, no Promise anywhere. `real`: delays are ms, Promise tools allowed. */
export type Mode = 'virtual' | 'real';

/** What a tool hands back (once, or as one value of an Observable). */
export type Out =
  | { kind: 'string'; content: string }
  | { kind: 'output'; content: string; isError: boolean; terminate: boolean; details?: unknown }
  /** neither a string nor a ToolOutput: the loop must turn it into an error result */
  | { kind: 'bad'; value: unknown };

export type Thrown = 'Error' | 'string' | 'object' | 'undefined';

/** What the handler does. */
export type Behaviour =
  | { kind: 'sync'; out: Out }
  | { kind: 'throw'; thrown: Thrown; message: string }
  /** values at the given delays (each relative to the previous), then complete / error / nothing, after `endDelay` */
  | { kind: 'observable'; steps: { delay: number; out: Out }[]; end: 'complete' | 'error' | 'never'; endDelay: number }
  /** real mode only. `signal: 'late'` reads `context.signal` only when its timer fires (an abort-aware async tool) */
  | { kind: 'promise'; delay: number; settle: 'resolve' | 'reject'; out: Out; message: string; signal: 'eager' | 'late' }
  /** never settles (an Observable that never emits; in real mode also a pending Promise) */
  | { kind: 'never'; as: 'observable' | 'promise' }
  /** returns an Observable whose subscribe function throws */
  | { kind: 'subscribeThrows'; message: string };

/** The name a call asks for. `tool` and `needs` are always registered; `nope` never; the Object.prototype names when the scenario registers them. */
export const HOSTILE_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'] as const;
export type ToolName = 'tool' | 'needs' | 'nope' | (typeof HOSTILE_NAMES)[number];

/** `ok`: what the tool lists; `missing`/`undefinedKey`: the `needs` tool's key is absent; the rest are not plain objects, or odd plain ones. */
export type InputKind = 'ok' | 'missing' | 'undefinedKey' | 'extra' | 'protoKey' | 'nullProto' | 'null' | 'array' | 'string' | 'number';

export interface CallSpec {
  /** the id the provider sends; a duplicate (R28) repeats the id of an earlier call of its turn */
  id: string;
  name: ToolName;
  input: InputKind;
  behaviour: Behaviour;
  /** R28: repeats an earlier call's id; the history keeps it as `ID_dup2` (`ID_dup3`, …) and it never runs */
  dup?: number;
  /** H2: what `beforeToolCall` does with this call (when the scenario has the hook) */
  before?: HookSpec<Decision>;
  /** H3: what `afterToolCall` does with its result (when the scenario has the hook) */
  after?: HookSpec<Replacement>;
}

// ---------------------------------------------------------------------------------------------
// Hooks (H1–H6)

/**
 * How a hook's answer comes: a plain value (or a throw), an Observable after `delay` (0: inside its
 * subscribe; a second value follows the first, which alone counts), or a Promise after `delay` (real mode only).
 */
export type Timing = { via: 'sync' } | { via: 'observable'; delay: number } | { via: 'promise'; delay: number };

/** What a hook answers: `value`, a failure (sync: a throw; Observable: an error; Promise: a rejection), an empty Observable, or nothing ever. */
export type HookAnswer<V> =
  | { kind: 'value'; value: V }
  | { kind: 'error'; message: string }
  | { kind: 'empty' }
  | { kind: 'never'; as: 'observable' | 'promise' };

export interface HookSpec<V> {
  answer: HookAnswer<V>;
  timing: Timing;
  /** the hook reads `context.signal` when it is called, or only when the run is checked (after the loop ended) */
  signal: 'eager' | 'late';
}

/** What `beforeToolCall` decides: nothing, `{ action: 'run' }`, a rewritten input, deny, answer, or a value that is no decision. */
export type Decision =
  | { kind: 'pass' }
  | { kind: 'run' }
  | { kind: 'rewrite'; input: InputKind }
  | { kind: 'deny'; reason: string }
  | { kind: 'answer'; out: Out }
  | { kind: 'bad'; value: unknown };

/** What `afterToolCall` gives back: nothing (keep), a string or `ToolOutput`, or a value that is no result. */
export type Replacement = { kind: 'keep' } | { kind: 'replace'; out: Out } | { kind: 'bad'; value: unknown };

/** What `prepareTurn` gives: the input as it came, a valid compaction, no ProviderInput, or a broken history (R21). */
export type Preparation = { kind: 'pass' } | { kind: 'compact' } | { kind: 'bad'; what: 'noInput' | 'brokenHistory' };

/** A hook that answers nothing, at once: what a call or turn without a spec of its own gets. */
export const PASS_BEFORE: HookSpec<Decision> = { answer: { kind: 'value', value: { kind: 'pass' } }, timing: { via: 'sync' }, signal: 'late' };
export const KEEP_AFTER: HookSpec<Replacement> = { answer: { kind: 'value', value: { kind: 'keep' } }, timing: { via: 'sync' }, signal: 'late' };
export const PASS_PREPARE: HookSpec<Preparation> = { answer: { kind: 'value', value: { kind: 'pass' } }, timing: { via: 'sync' }, signal: 'late' };

export type Step = { delay: number; kind: 'text'; text: string } | { delay: number; kind: 'call'; call: CallSpec };

/**
 * Provider faults (R10). `at` is clipped to the turn's event count, so it shrinks towards the start.
 * - error: the Observable errors instead of sending its `at`-th event;
 * - noEnd: it completes without `message_end`;
 * - beforeStart / afterEnd / secondStart: an event out of order;
 * - unknownType: an event of a type the protocol does not have;
 * - badText: a `text_delta` whose `text` is not a string;
 * - badStop: a `message_end` with an unknown stop reason;
 * - throwOnCall: the provider function itself throws.
 */
export type Fault =
  | { kind: 'error'; at: number; message: string }
  | { kind: 'noEnd' }
  | { kind: 'beforeStart' }
  | { kind: 'afterEnd'; event: 'text' | 'call' | 'start' | 'end' }
  | { kind: 'secondStart'; at: number }
  | { kind: 'unknownType'; at: number }
  | { kind: 'badText'; at: number; value: unknown }
  | { kind: 'badStop' }
  | { kind: 'throwOnCall' };

export interface TurnSpec {
  startDelay: number;
  steps: Step[];
  endDelay: number;
  stop: StopReason;
  /** sent with `message_end` when the stop reason is `error` or `aborted` */
  errorMessage?: string;
  fault?: Fault;
  /** every valid event (and tool call) carries fields the protocol does not have */
  extraFields: boolean;
  /** R27: the token counts `message_end` reports, if any */
  usage?: { inputTokens: number; outputTokens: number; cacheReadTokens?: number };
  /** H6: what `prepareTurn` does before this turn's provider call (when the scenario has the hook) */
  prepare?: HookSpec<Preparation>;
}

/**
 * When the consumer cancels: as it receives its `event`-th loop event (0-based), at a `time`, from inside
 * the `handler`-th tool handler call, the `providerCall`-th provider call or the `hook`-th hook call
 * (re-entrant), or (signal only) before it subscribes.
 */
export type CancelPoint = { event: number } | { time: number } | { handler: number } | { providerCall: number } | { hook: number };
export type Cancel = { how: 'unsubscribe' | 'signal'; at: CancelPoint } | { how: 'signal'; at: 'before' };

export interface Scenario {
  mode: Mode;
  initial: 'empty' | 'user' | 'resumed';
  turns: TurnSpec[];
  maxTurns?: number;
  toolExecution?: 'parallel' | 'sequential';
  maxConcurrency?: number;
  toolTimeoutMs?: number;
  /** which of the Object.prototype names are registered as real tools */
  hostileRegistered: string[];
  cancel?: Cancel;
  /** the hooks the loop is given (each call and turn says what its hook does) */
  hooks?: { before: boolean; after: boolean; prepare: boolean };
  /** a hook that never answers holds the loop until a cancellation: this one, at `time`, when no other is timed */
  deadline?: { how: 'unsubscribe' | 'signal'; time: number };
}

// ---------------------------------------------------------------------------------------------
// What a scenario means: shared by the harness (which plays it) and the model (which predicts it)

export const DEFAULT_MAX_TURNS = 8;

export function initialMessages(kind: Scenario['initial']): AgentMessage[] {
  switch (kind) {
    case 'empty':
      return [];
    case 'user':
      return [{ role: 'user', content: 'question' }];
    case 'resumed':
      return [
        { role: 'user', content: 'earlier question' },
        { role: 'assistant', content: 'let me look', stopReason: 'toolUse', toolCalls: [{ id: 'p1', name: 'tool', input: { q: 'old' } }] },
        { role: 'toolResult', toolCallId: 'p1', toolName: 'tool', content: 'old result', isError: false },
        { role: 'assistant', content: 'answered', stopReason: 'stop' },
        { role: 'user', content: 'question' },
      ];
  }
}

export function isRegistered(scenario: Scenario, name: string): boolean {
  return name === 'tool' || name === 'needs' || scenario.hostileRegistered.includes(name);
}

/** The call's `input` as the provider sends it (a fresh value each time). */
export function inputOf(call: CallSpec): unknown {
  const base: Record<string, unknown> = call.name === 'needs' ? { key: 'value' } : { q: 'value' };
  switch (call.input) {
    case 'ok':
      return base;
    case 'missing':
      return {};
    case 'undefinedKey':
      return { key: undefined, q: undefined };
    case 'extra':
      return { ...base, extra: [1, 2], nested: { deep: true } };
    case 'protoKey':
      // what JSON.parse makes of a model's `{"__proto__": …}`: an own key, still a plain object
      return JSON.parse(`{"__proto__": {"polluted": true}, ${call.name === 'needs' ? '"key"' : '"q"'}: "value"}`);
    case 'nullProto':
      return Object.assign(Object.create(null), base);
    case 'null':
      return null;
    case 'array':
      return ['value'];
    case 'string':
      return 'value';
    case 'number':
      return 42;
  }
}

export function inputIsPlainObject(kind: InputKind): boolean {
  return !['null', 'array', 'string', 'number'].includes(kind);
}

/** How the loop's input check (R9, R17) answers an input of this kind for the tool `name`: `undefined` when it passes. */
export function inputProblem(name: ToolName, kind: InputKind): 'invalid' | 'missing' | undefined {
  if (!inputIsPlainObject(kind)) return 'invalid';
  if (name === 'needs' && (kind === 'missing' || kind === 'undefinedKey')) return 'missing';
  return undefined;
}

/** R28: the id the history keeps for a call. */
export function keptId(call: CallSpec): string {
  return call.dup === undefined ? call.id : `${call.id}_dup${call.dup}`;
}

export function toolCallOf(call: CallSpec, extraFields: boolean): ToolCall {
  const toolCall = { id: call.id, name: call.name, input: inputOf(call) } as ToolCall;
  return extraFields ? Object.assign(toolCall, { index: 0, providerOnly: 'x' }) : toolCall;
}

/** One item of what a provider subscription plays: an event, or an error. */
export type ScriptItem =
  | { delay: number; event: unknown; valid: boolean; call?: CallSpec }
  | { delay: number; error: Error };

export interface TurnScript {
  /** the provider function throws instead of returning an Observable */
  throwOnCall?: Error;
  items: ScriptItem[];
}

/** When the provider is asked for a turn past the script: a plain answer. */
export const ANSWER_TURN: TurnSpec = {
  startDelay: 0,
  steps: [{ delay: 0, kind: 'text', text: 'done' }],
  endDelay: 0,
  stop: 'stop',
  extraFields: false,
};

export function turnSpec(scenario: Scenario, turn: number): TurnSpec {
  return scenario.turns[turn - 1] ?? ANSWER_TURN;
}

/** The events (fresh objects) a provider subscription of `turn` sends, faults included. */
export function turnScript(turn: TurnSpec): TurnScript {
  const extra = (event: Record<string, unknown>) => (turn.extraFields ? { ...event, extra: 'ignored', index: 7 } : event);
  const valid: ScriptItem[] = [{ delay: turn.startDelay, event: extra({ type: 'message_start' }), valid: true }];
  for (const step of turn.steps) {
    if (step.kind === 'text') valid.push({ delay: step.delay, event: extra({ type: 'text_delta', text: step.text }), valid: true });
    else valid.push({ delay: step.delay, event: extra({ type: 'tool_call', call: toolCallOf(step.call, turn.extraFields) }), valid: true, call: step.call });
  }
  const end: Record<string, unknown> = { type: 'message_end', stopReason: turn.stop };
  if (turn.errorMessage !== undefined) end.errorMessage = turn.errorMessage;
  if (turn.usage !== undefined) end.usage = { ...turn.usage };
  valid.push({ delay: turn.endDelay, event: extra(end), valid: true });

  const fault = turn.fault;
  if (fault === undefined) return { items: valid };
  const n = valid.length;
  const bad = (event: unknown): ScriptItem => ({ delay: 0, event, valid: false });
  const insert = (at: number, item: ScriptItem) => [...valid.slice(0, at), item, ...valid.slice(at)];
  switch (fault.kind) {
    case 'throwOnCall':
      return { throwOnCall: new Error('provider exploded'), items: [] };
    case 'error': {
      const at = Math.min(fault.at, n);
      return { items: [...valid.slice(0, at), { delay: valid[at]?.delay ?? 0, error: new Error(fault.message) }] };
    }
    case 'noEnd':
      return { items: valid.slice(0, -1) };
    case 'beforeStart':
      return { items: insert(0, bad({ type: 'text_delta', text: 'too early' })) };
    case 'afterEnd': {
      const late =
        fault.event === 'text'
          ? { type: 'text_delta', text: 'too late' }
          : fault.event === 'call'
            ? { type: 'tool_call', call: { id: 'late', name: 'tool', input: {} } }
            : fault.event === 'start'
              ? { type: 'message_start' }
              : { type: 'message_end', stopReason: 'stop' };
      return { items: [...valid, bad(late)] };
    }
    case 'secondStart':
      return { items: insert(1 + Math.min(fault.at, n - 2), bad({ type: 'message_start' })) };
    case 'unknownType':
      return { items: insert(Math.min(fault.at, n), bad({ type: 'reasoning', text: 'hmm' })) };
    case 'badText':
      return { items: insert(1 + Math.min(fault.at, n - 2), bad({ type: 'text_delta', text: fault.value })) };
    case 'badStop':
      return { items: [...valid.slice(0, -1), bad({ type: 'message_end', stopReason: 'finished' })] };
  }
}

// ---------------------------------------------------------------------------------------------
// Arbitraries

export interface ScenarioConstraints {
  mode?: Mode;
  /** `false`: no cancellation at all */
  cancel?: boolean;
  /** `false`: no provider faults */
  faults?: boolean;
  /** `true`: always some hooks; `false`: none (default: about one scenario in three has some) */
  hooks?: boolean;
}

/** Delays: frames in virtual mode, ms in real mode. Tool durations are even and timeouts odd in virtual mode, so they never tie. */
const providerDelay = (mode: Mode) => (mode === 'virtual' ? fc.constantFrom(0, 0, 1, 2, 3, 5) : fc.constantFrom(0, 0, 0, 1));
const toolDelay = (mode: Mode) => (mode === 'virtual' ? fc.constantFrom(0, 2, 4, 6, 10, 20) : fc.constantFrom(0, 0, 1, 2));
const timeoutArb = (mode: Mode) => (mode === 'virtual' ? fc.constantFrom(5, 15, 25) : fc.constantFrom(2, 4));

const word = fc.constantFrom('a', 'b', 'ok', 'x y', 'ünï', '"q"', '', '\n');
// mostly toolUse, so that loops often go on for several turns
const stopReason = fc.oneof(
  { weight: 10, arbitrary: fc.constant<StopReason>('toolUse') },
  { weight: 2, arbitrary: fc.constant<StopReason>('stop') },
  { weight: 1, arbitrary: fc.constantFrom<StopReason>('length', 'error', 'aborted') },
);

const stringOutArb = word.map((content): Out => ({ kind: 'string', content }));
const toolOutputArb = fc
  .record({
    content: word,
    isError: fc.boolean(),
    terminate: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    details: fc.option(fc.constantFrom({ n: 1 }, 'd'), { nil: undefined }),
  })
  .map(({ content, isError, terminate, details }): Out =>
    details === undefined ? { kind: 'output', content, isError, terminate } : { kind: 'output', content, isError, terminate, details },
  );

const outArb: fc.Arbitrary<Out> = fc.oneof(
  { weight: 4, arbitrary: stringOutArb },
  { weight: 3, arbitrary: toolOutputArb },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(42, null, { content: 7 }, ['list']).map((value): Out => ({ kind: 'bad', value })) },
);

/** A string or a ToolOutput: what a hook may answer with (H2's `answer`, H3's replacement). */
const resultOutArb: fc.Arbitrary<Out> = fc.oneof({ weight: 1, arbitrary: stringOutArb }, { weight: 1, arbitrary: toolOutputArb });

function behaviourArb(mode: Mode): fc.Arbitrary<Behaviour> {
  const common: fc.WeightedArbitrary<Behaviour>[] = [
    { weight: 4, arbitrary: outArb.map((out): Behaviour => ({ kind: 'sync', out })) },
    {
      weight: 2,
      arbitrary: fc
        .record({ thrown: fc.constantFrom<Thrown>('Error', 'Error', 'string', 'object', 'undefined'), message: fc.constantFrom('kaput', 'disk full') })
        .map((r): Behaviour => ({ kind: 'throw', ...r })),
    },
    {
      weight: 5,
      arbitrary: fc
        .record({
          steps: fc.array(fc.record({ delay: toolDelay(mode), out: outArb }), { maxLength: 3 }),
          end: fc.constantFrom<'complete' | 'error' | 'never'>('complete', 'complete', 'complete', 'error', 'never'),
          endDelay: toolDelay(mode),
        })
        .map((r): Behaviour => ({ kind: 'observable', ...r })),
    },
    { weight: 1, arbitrary: fc.constant<Behaviour>({ kind: 'never', as: 'observable' }) },
    { weight: 1, arbitrary: fc.constant<Behaviour>({ kind: 'subscribeThrows', message: 'no connection' }) },
  ];
  if (mode === 'virtual') return fc.oneof(...common);
  return fc.oneof(
    ...common,
    {
      weight: 5,
      arbitrary: fc
        .record({
          delay: toolDelay(mode),
          settle: fc.constantFrom<'resolve' | 'reject'>('resolve', 'resolve', 'reject'),
          out: outArb,
          message: fc.constantFrom('rejected', 'timeout upstream'),
          signal: fc.constantFrom<'eager' | 'late'>('eager', 'late'),
        })
        .map((r): Behaviour => ({ kind: 'promise', ...r })),
    },
    { weight: 1, arbitrary: fc.constant<Behaviour>({ kind: 'never', as: 'promise' }) },
  );
}

const nameArb = (hostile: boolean) =>
  hostile
    ? fc.oneof(
        { weight: 10, arbitrary: fc.constant<ToolName>('tool') },
        { weight: 3, arbitrary: fc.constant<ToolName>('needs') },
        { weight: 1, arbitrary: fc.constant<ToolName>('nope') },
        { weight: 2, arbitrary: fc.constantFrom<ToolName>(...HOSTILE_NAMES) },
      )
    : fc.constantFrom<ToolName>('tool', 'tool', 'tool', 'needs');

const inputArb = fc.oneof(
  { weight: 12, arbitrary: fc.constant<InputKind>('ok') },
  { weight: 3, arbitrary: fc.constantFrom<InputKind>('missing', 'undefinedKey', 'extra', 'protoKey', 'nullProto') },
  { weight: 2, arbitrary: fc.constantFrom<InputKind>('null', 'array', 'string', 'number') },
);

// Hooks: most scenarios have none (so the old coverage stays); the others give each call and turn a hook of its own

const hookDelay = (mode: Mode) => (mode === 'virtual' ? fc.constantFrom(0, 1, 2, 3, 5, 8) : fc.constantFrom(0, 0, 1, 2));

function timingArb(mode: Mode): fc.Arbitrary<Timing> {
  const observable = hookDelay(mode).map((delay): Timing => ({ via: 'observable', delay }));
  const sync = fc.constant<Timing>({ via: 'sync' });
  if (mode === 'virtual') return fc.oneof({ weight: 1, arbitrary: sync }, { weight: 1, arbitrary: observable });
  const promise = hookDelay(mode).map((delay): Timing => ({ via: 'promise', delay }));
  return fc.oneof({ weight: 2, arbitrary: sync }, { weight: 2, arbitrary: observable }, { weight: 3, arbitrary: promise });
}

/** `failing`: the weight of each way to fail, against 20 for an answer; `never` only where a cancellation may come. */
function hookSpecArb<V>(value: fc.Arbitrary<V>, mode: Mode, failing: number, never: boolean): fc.Arbitrary<HookSpec<V>> {
  const answers: fc.WeightedArbitrary<HookAnswer<V>>[] = [
    { weight: 20, arbitrary: value.map((v): HookAnswer<V> => ({ kind: 'value', value: v })) },
    { weight: failing, arbitrary: fc.constantFrom('no budget', 'reviewer away').map((message): HookAnswer<V> => ({ kind: 'error', message })) },
    { weight: Math.max(1, failing / 2), arbitrary: fc.constant<HookAnswer<V>>({ kind: 'empty' }) },
  ];
  if (never) answers.push({ weight: 1, arbitrary: fc.constantFrom<'observable' | 'promise'>(...(mode === 'real' ? (['observable', 'promise'] as const) : (['observable'] as const))).map((as): HookAnswer<V> => ({ kind: 'never', as })) });
  return fc.record({ answer: fc.oneof(...answers), timing: timingArb(mode), signal: fc.constantFrom<'eager' | 'late'>('eager', 'late') }).map((spec) =>
    // a Promise cannot complete without a value: an empty answer is an Observable's
    spec.answer.kind === 'empty' && spec.timing.via === 'promise' ? { ...spec, timing: { via: 'observable', delay: spec.timing.delay } } : spec,
  );
}

const rewriteArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom<InputKind>('ok', 'extra', 'protoKey', 'nullProto') },
  { weight: 2, arbitrary: fc.constantFrom<InputKind>('missing', 'undefinedKey') },
  { weight: 1, arbitrary: fc.constantFrom<InputKind>('null', 'array', 'string', 'number') },
);

const decisionArb: fc.Arbitrary<Decision> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Decision>({ kind: 'pass' }) },
  { weight: 2, arbitrary: fc.constant<Decision>({ kind: 'run' }) },
  { weight: 3, arbitrary: rewriteArb.map((input): Decision => ({ kind: 'rewrite', input })) },
  { weight: 2, arbitrary: fc.constantFrom('not allowed', 'rm -rf').map((reason): Decision => ({ kind: 'deny', reason })) },
  { weight: 2, arbitrary: resultOutArb.map((out): Decision => ({ kind: 'answer', out })) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>(true, 'yes', { action: 'allow' }, { action: 'deny' }, { action: 'answer', output: 3 }).map((value): Decision => ({ kind: 'bad', value })),
  },
);

const replacementArb: fc.Arbitrary<Replacement> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<Replacement>({ kind: 'keep' }) },
  { weight: 4, arbitrary: resultOutArb.map((out): Replacement => ({ kind: 'replace', out })) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(42, { content: 7 }, ['x']).map((value): Replacement => ({ kind: 'bad', value })) },
);

const preparationArb: fc.Arbitrary<Preparation> = fc.oneof(
  { weight: 5, arbitrary: fc.constant<Preparation>({ kind: 'pass' }) },
  { weight: 4, arbitrary: fc.constant<Preparation>({ kind: 'compact' }) },
  { weight: 1, arbitrary: fc.constantFrom<'noInput' | 'brokenHistory'>('noInput', 'brokenHistory').map((what): Preparation => ({ kind: 'bad', what })) },
);

const someHooksArb: fc.Arbitrary<Scenario['hooks']> = fc
  .record({ before: fc.boolean(), after: fc.boolean(), prepare: fc.boolean() })
  .filter((h) => h.before || h.after || h.prepare);
const hooksArb = fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: someHooksArb });

type RawCall = { delay: number; kind: 'call'; name: ToolName; input: InputKind; behaviour: Behaviour; dup: boolean; before?: HookSpec<Decision>; after?: HookSpec<Replacement> };
type RawStep = { delay: number; kind: 'text'; text: string } | RawCall;

/** `hooks`: give each call what its beforeToolCall and afterToolCall do. */
function stepArb(mode: Mode, hooks: HookArbs | undefined): fc.Arbitrary<RawStep> {
  const call = {
    delay: providerDelay(mode),
    kind: fc.constant<'call'>('call'),
    name: nameArb(true),
    input: inputArb,
    behaviour: behaviourArb(mode),
    // R28: now and then a call repeats the id of an earlier one of its turn
    dup: fc.oneof({ weight: 14, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  };
  return fc.oneof(
    { weight: 2, arbitrary: fc.record({ delay: providerDelay(mode), kind: fc.constant<'text'>('text'), text: word }) },
    {
      weight: 3,
      arbitrary: hooks === undefined ? fc.record(call) : fc.record({ ...call, before: hooks.before, after: hooks.after }),
    },
  );
}

interface HookArbs {
  before: fc.Arbitrary<HookSpec<Decision>>;
  after: fc.Arbitrary<HookSpec<Replacement>>;
  prepare: fc.Arbitrary<HookSpec<Preparation>>;
}

function hookArbs(mode: Mode, never: boolean): HookArbs {
  return {
    before: hookSpecArb(decisionArb, mode, 2, never),
    after: hookSpecArb(replacementArb, mode, 2, never),
    prepare: hookSpecArb(preparationArb, mode, 1, never),
  };
}

const faultArb: fc.Arbitrary<Fault> = fc.oneof(
  fc.record({ kind: fc.constant<'error'>('error'), at: fc.nat(8), message: fc.constantFrom('connection reset', 'overloaded') }),
  fc.constant<Fault>({ kind: 'noEnd' }),
  fc.constant<Fault>({ kind: 'beforeStart' }),
  fc.record({ kind: fc.constant<'afterEnd'>('afterEnd'), event: fc.constantFrom<'text' | 'call' | 'start' | 'end'>('text', 'call', 'start', 'end') }),
  fc.record({ kind: fc.constant<'secondStart'>('secondStart'), at: fc.nat(8) }),
  fc.record({ kind: fc.constant<'unknownType'>('unknownType'), at: fc.nat(8) }),
  fc.record({ kind: fc.constant<'badText'>('badText'), at: fc.nat(8), value: fc.constantFrom<unknown>(null, 42, undefined, { text: 'x' }) }),
  fc.constant<Fault>({ kind: 'badStop' }),
  fc.constant<Fault>({ kind: 'throwOnCall' }),
);

function turnArb(mode: Mode, faults: boolean, hooks: HookArbs | undefined): fc.Arbitrary<Omit<TurnSpec, 'steps'> & { steps: RawStep[] }> {
  return fc
    .record({
      startDelay: providerDelay(mode),
      steps: fc.array(stepArb(mode, hooks), { maxLength: 7 }),
      endDelay: providerDelay(mode),
      stop: stopReason,
      errorMessage: fc.option(fc.constant('upstream says no'), { nil: undefined }),
      // a fault in about one turn of seven
      fault: faults ? fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: faultArb }) : fc.constant(undefined),
      extraFields: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      usage: fc.option(
        fc.record({ inputTokens: fc.nat(5000), outputTokens: fc.nat(500), cacheReadTokens: fc.option(fc.nat(100), { nil: undefined }) }, { requiredKeys: ['inputTokens', 'outputTokens'] }),
        { nil: undefined },
      ),
      ...(hooks === undefined ? {} : { prepare: hooks.prepare }),
      // about one turn in five is synchronous as a whole: its tools start (and cancellations come) while the
      // turn is still inside its subscribe, where the loop has no teardown in place yet (D2, D6, D11)
      synchronous: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    })
    .map(({ synchronous, ...turn }) => {
      // at most 4 tool calls per turn
      let calls = 0;
      const steps = turn.steps.filter((step) => step.kind === 'text' || ++calls <= 4).map((step) => (synchronous ? { ...step, delay: 0 } : step));
      const result = synchronous ? { ...turn, startDelay: 0, endDelay: 0, steps } : { ...turn, steps };
      if (turn.errorMessage === undefined || (turn.stop !== 'error' && turn.stop !== 'aborted')) delete result.errorMessage;
      if (turn.fault === undefined) delete result.fault;
      return result;
    });
}

function cancelArb(mode: Mode): fc.Arbitrary<Cancel | undefined> {
  const how = fc.constantFrom<'unsubscribe' | 'signal'>('unsubscribe', 'signal');
  const time = mode === 'virtual' ? fc.nat(40) : fc.nat(6);
  return fc.option(
    fc.oneof(
      { weight: 6, arbitrary: fc.record({ how, at: fc.record({ event: fc.nat(40) }) }) },
      { weight: 4, arbitrary: fc.record({ how, at: fc.record({ time }) }) },
      { weight: 2, arbitrary: fc.record({ how, at: fc.record({ handler: fc.nat(6) }) }) },
      { weight: 1, arbitrary: fc.record({ how, at: fc.record({ providerCall: fc.nat(3) }) }) },
      { weight: 1, arbitrary: fc.record({ how, at: fc.record({ hook: fc.nat(6) }) }) },
      { weight: 1, arbitrary: fc.constant<Cancel>({ how: 'signal', at: 'before' }) },
    ),
    { nil: undefined, freq: 2 }, // freq 2: half the scenarios have no cancellation
  );
}

export function scenarioArb(constraints: ScenarioConstraints = {}): fc.Arbitrary<Scenario> {
  const modeArb = constraints.mode ? fc.constant(constraints.mode) : fc.constantFrom<Mode>('virtual', 'virtual', 'virtual', 'real');
  // hooks that never answer only where a cancellation may come to end the loop
  const never = constraints.cancel !== false;
  const hooks = constraints.hooks === undefined ? hooksArb : constraints.hooks ? someHooksArb : fc.constant(undefined);
  return fc.tuple(modeArb, hooks).chain(([mode, hooks]) =>
    fc
      .record({
        initial: fc.constantFrom<Scenario['initial']>('user', 'user', 'empty', 'resumed'),
        turns: fc.array(turnArb(mode, constraints.faults !== false, hooks && hookArbs(mode, never)), { minLength: 1, maxLength: 5 }),
        maxTurns: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
        toolExecution: fc.option(fc.constantFrom<'parallel' | 'sequential'>('parallel', 'sequential'), { nil: undefined }),
        maxConcurrency: fc.option(fc.constantFrom(1, 2, 3, Infinity), { nil: undefined }),
        toolTimeoutMs: fc.option(timeoutArb(mode), { nil: undefined }),
        hostileRegistered: fc.subarray([...HOSTILE_NAMES]),
        cancel: constraints.cancel === false ? fc.constant(undefined) : cancelArb(mode),
        deadlineHow: fc.constantFrom<'unsubscribe' | 'signal'>('unsubscribe', 'signal'),
      })
      .map((raw) => finishScenario(mode, hooks, raw)),
  );
}

/**
 * Numbers the calls (a duplicate takes the id of the turn's last call before it), drops unset options and the
 * specs of hooks the scenario does not have, and makes sure every loop ends: a never-settling tool gets a
 * timeout or a timed cancel, a hook that never answers a deadline.
 */
function finishScenario(
  mode: Mode,
  hooks: Scenario['hooks'],
  raw: Omit<Scenario, 'mode' | 'turns' | 'hooks' | 'deadline'> & { turns: (Omit<TurnSpec, 'steps'> & { steps: RawStep[] })[]; deadlineHow: 'unsubscribe' | 'signal' },
): Scenario {
  let hangs = false;
  let waits = false; // a hook that never answers
  const never = (spec: HookSpec<unknown> | undefined) => spec?.answer.kind === 'never';
  const turns: TurnSpec[] = raw.turns.map((rawTurn, t) => {
    let c = 0;
    const repeats = new Map<string, number>();
    let last: string | undefined;
    const steps = rawTurn.steps.map((step): Step => {
      if (step.kind === 'text') return step;
      const { delay, name, input, behaviour, dup, before, after } = step;
      if (behaviour.kind === 'never' || (behaviour.kind === 'observable' && behaviour.end === 'never')) hangs = true;
      const call: CallSpec = { id: `c${t + 1}.${++c}`, name, input, behaviour };
      if (dup && last !== undefined) {
        const n = (repeats.get(last) ?? 1) + 1;
        repeats.set(last, n);
        call.id = last;
        call.dup = n;
        c--;
      } else {
        last = call.id;
        if (hooks?.before && before !== undefined) call.before = before;
        if (hooks?.after && after !== undefined) call.after = after;
        if (never(call.before) || never(call.after)) waits = true;
      }
      return { delay, kind: 'call', call };
    });
    const turn: TurnSpec = { ...rawTurn, steps };
    if (!hooks?.prepare) delete turn.prepare;
    if (never(turn.prepare)) waits = true;
    return turn;
  });
  const scenario: Scenario = { mode, initial: raw.initial, turns, hostileRegistered: raw.hostileRegistered };
  if (raw.maxTurns !== undefined) scenario.maxTurns = raw.maxTurns;
  if (raw.toolExecution !== undefined) scenario.toolExecution = raw.toolExecution;
  if (raw.maxConcurrency !== undefined) scenario.maxConcurrency = raw.maxConcurrency;
  if (raw.toolTimeoutMs !== undefined) scenario.toolTimeoutMs = raw.toolTimeoutMs;
  if (raw.cancel !== undefined) scenario.cancel = raw.cancel;
  if (hooks !== undefined) scenario.hooks = hooks;
  const timedCancel = scenario.cancel !== undefined && scenario.cancel.at !== 'before' && 'time' in scenario.cancel.at;
  if (hangs && scenario.toolTimeoutMs === undefined && !timedCancel) scenario.toolTimeoutMs = mode === 'virtual' ? 25 : 4;
  if (waits && !timedCancel && scenario.cancel?.at !== 'before') {
    scenario.deadline = { how: scenario.cancel?.how ?? raw.deadlineHow, time: mode === 'virtual' ? 120 : 15 };
  }
  return withToString(scenario);
}

export function withToString(scenario: Scenario): Scenario {
  Object.defineProperty(scenario, fc.toStringMethod, { value: () => describeScenario(scenario), enumerable: false });
  return scenario;
}

// ---------------------------------------------------------------------------------------------
// Printing: a failing property shows the shrunk scenario in this form

const q = (value: unknown) => (value === undefined ? 'undefined' : JSON.stringify(value));

function describeOut(out: Out): string {
  switch (out.kind) {
    case 'string':
      return q(out.content);
    case 'output': {
      const flags = [out.isError && 'isError', out.terminate && 'terminate', out.details !== undefined && `details=${q(out.details)}`].filter(Boolean);
      return `{${q(out.content)}${flags.length ? ' ' + flags.join(' ') : ''}}`;
    }
    case 'bad':
      return `BAD(${q(out.value)})`;
  }
}

export function describeBehaviour(behaviour: Behaviour): string {
  switch (behaviour.kind) {
    case 'sync':
      return `returns ${describeOut(behaviour.out)}`;
    case 'throw':
      return `throws ${behaviour.thrown}(${q(behaviour.message)})`;
    case 'observable': {
      const steps = behaviour.steps.map((s) => `+${s.delay} ${describeOut(s.out)}`);
      const end = behaviour.end === 'complete' ? '|' : behaviour.end === 'error' ? '#' : 'never';
      return `Observable[${[...steps, `+${behaviour.endDelay} ${end}`].join(', ')}]`;
    }
    case 'promise':
      return `Promise(+${behaviour.delay} ${behaviour.settle === 'resolve' ? describeOut(behaviour.out) : `reject ${q(behaviour.message)}`}, signal ${behaviour.signal})`;
    case 'never':
      return `never (${behaviour.as})`;
    case 'subscribeThrows':
      return `Observable whose subscribe throws ${q(behaviour.message)}`;
  }
}

function describeTiming(timing: Timing): string {
  return timing.via === 'sync' ? 'at once' : `${timing.via === 'observable' ? 'Observable' : 'Promise'} +${timing.delay}`;
}

export function describeHook<V>(spec: HookSpec<V>, value: (v: V) => string): string {
  const signal = spec.signal === 'eager' ? ', reads its signal at once' : '';
  switch (spec.answer.kind) {
    case 'value':
      return `${value(spec.answer.value)} (${describeTiming(spec.timing)}${signal})`;
    case 'error':
      return `fails ${q(spec.answer.message)} (${spec.timing.via === 'sync' ? 'throws' : spec.timing.via === 'observable' ? `Observable +${spec.timing.delay} errors` : `Promise +${spec.timing.delay} rejects`}${signal})`;
    case 'empty':
      return `completes without a value (${describeTiming(spec.timing)}${signal})`;
    case 'never':
      return `never answers (${spec.answer.as}${signal})`;
  }
}

export function describeDecision(decision: Decision): string {
  switch (decision.kind) {
    case 'pass':
      return 'nothing';
    case 'run':
      return '{run}';
    case 'rewrite':
      return `{run, input ${decision.input}}`;
    case 'deny':
      return `{deny ${q(decision.reason)}}`;
    case 'answer':
      return `{answer ${describeOut(decision.out)}}`;
    case 'bad':
      return `no decision ${q(decision.value)}`;
  }
}

export function describeReplacement(replacement: Replacement): string {
  return replacement.kind === 'keep' ? 'keeps it' : replacement.kind === 'replace' ? `replaces it with ${describeOut(replacement.out)}` : `no result ${q(replacement.value)}`;
}

export function describePreparation(preparation: Preparation): string {
  return preparation.kind === 'pass' ? 'the input as it came' : preparation.kind === 'compact' ? 'a compacted history' : `BAD(${preparation.what})`;
}

function describeFault(fault: Fault): string {
  switch (fault.kind) {
    case 'error':
      return `errors ${q(fault.message)} instead of event #${fault.at}`;
    case 'noEnd':
      return 'completes without message_end';
    case 'beforeStart':
      return 'sends text_delta before message_start';
    case 'afterEnd':
      return `sends ${fault.event} after message_end`;
    case 'secondStart':
      return `sends a second message_start after event #${fault.at}`;
    case 'unknownType':
      return `sends an unknown event type at #${fault.at}`;
    case 'badText':
      return `sends text_delta with text ${q(fault.value)} after event #${fault.at}`;
    case 'badStop':
      return 'ends with an unknown stop reason';
    case 'throwOnCall':
      return 'the provider function throws';
  }
}

export function describeTurn(turn: TurnSpec, n: number): string {
  const steps = turn.steps.flatMap((step) => {
    if (step.kind === 'text') return [`+${step.delay} text ${q(step.text)}`];
    const { call } = step;
    const dup = call.dup === undefined ? '' : ` (duplicate id, kept as ${keptId(call)})`;
    return [
      `+${step.delay} call ${call.id}${dup} ${call.name}(${call.input}) -> ${describeBehaviour(call.behaviour)}`,
      ...(call.before ? [`    beforeToolCall: ${describeHook(call.before, describeDecision)}`] : []),
      ...(call.after ? [`    afterToolCall: ${describeHook(call.after, describeReplacement)}`] : []),
    ];
  });
  const end = `+${turn.endDelay} end ${turn.stop}${turn.errorMessage ? ` ${q(turn.errorMessage)}` : ''}`;
  const prepare = turn.prepare ? [`      prepareTurn: ${describeHook(turn.prepare, describePreparation)}`] : [];
  const lines = [`  turn ${n}: +${turn.startDelay} start${turn.extraFields ? ' (events carry extra fields)' : ''}`, ...prepare, ...steps.map((s) => `      ${s}`), `      ${end}`];
  if (turn.fault) lines.push(`      FAULT: ${describeFault(turn.fault)}`);
  return lines.join('\n');
}

function describeCancelPoint(at: CancelPoint | 'before'): string {
  if (at === 'before') return 'before subscribe';
  if ('event' in at) return `as the consumer receives loop event #${at.event} (0-based)`;
  if ('time' in at) return `at t=${at.time}`;
  if ('handler' in at) return `from inside tool handler call #${at.handler} (0-based), before it returns`;
  if ('hook' in at) return `from inside hook call #${at.hook} (0-based), before it returns`;
  return `from inside provider call #${at.providerCall} (0-based), before it returns`;
}

export function describeScenario(s: Scenario): string {
  const options = [
    `mode=${s.mode}`,
    `initial=${s.initial}`,
    s.maxTurns !== undefined && `maxTurns=${s.maxTurns}`,
    s.toolExecution && `toolExecution=${s.toolExecution}`,
    s.maxConcurrency !== undefined && `maxConcurrency=${s.maxConcurrency}`,
    s.toolTimeoutMs !== undefined && `toolTimeoutMs=${s.toolTimeoutMs}`,
    s.hostileRegistered.length > 0 && `registered also: ${s.hostileRegistered.join(', ')}`,
    s.hooks && `hooks: ${(['before', 'after', 'prepare'] as const).filter((h) => s.hooks![h]).map((h) => ({ before: 'beforeToolCall', after: 'afterToolCall', prepare: 'prepareTurn' })[h]).join(', ')}`,
  ].filter(Boolean);
  const cancel =
    (s.cancel ? `  cancel: ${s.cancel.how} ${describeCancelPoint(s.cancel.at)}` : '  cancel: none') +
    (s.deadline ? `\n  deadline: ${s.deadline.how} at t=${s.deadline.time} (a hook never answers)` : '');
  return `\nScenario(${options.join(', ')})\n${cancel}\n${s.turns.map((t, i) => describeTurn(t, i + 1)).join('\n')}\n`;
}
