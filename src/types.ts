import type { Observable } from 'rxjs';

/** Why an assistant message ended. `length` and `aborted` extend the series. */
export type StopReason = 'stop' | 'toolUse' | 'length' | 'error' | 'aborted';

/** A tool the model asked for. The core executes it; the provider only requests it. */
export interface ToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/**
 * An instruction for the model, in the history (R21). The loop carries it like any message; the
 * providers send it as the API's system instruction (OpenAI in place, Anthropic in the top-level `system`).
 *
 * ```ts
 * const messages: AgentMessage[] = [{ role: 'system', content: 'Answer in French.' }, { role: 'user', content: 'Hi' }];
 * ```
 */
export interface SystemMessage {
  role: 'system';
  content: string;
}

/**
 * An image, a sound or a file that goes with a message (F1): base64 `data` or a `url` (`http(s):` or `data:`),
 * exactly one. `content` stays the message's text; a provider sends each attachment as its API takes it (F2).
 *
 * ```ts
 * const chart: Attachment = { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo…' };
 * ```
 */
export interface Attachment {
  type: 'image' | 'audio' | 'file';
  mimeType: string;
  data?: string;
  url?: string;
  name?: string;
}

/** What the user said. */
export interface UserMessage {
  role: 'user';
  content: string;
  /** F1: pictures, sounds and files the user sent with the text. */
  attachments?: Attachment[];
}

/** One model reply: its text, the calls it requested, and why it ended. */
export interface AssistantMessage {
  role: 'assistant';
  content: string;
  stopReason: StopReason;
  /** The calls this message requested, in arrival order. */
  toolCalls?: ToolCall[];
  /** Why, when `stopReason` is `'error'` or `'aborted'`. */
  errorMessage?: string;
  /** P10: the reasoning blocks the API sent with this message (Anthropic `thinking`), sent back as they came. */
  reasoning?: unknown[];
}

/**
 * The result of one call, as the model reads it on its next turn. `isError` results are how failures
 * reach the model (R9): `unknown tool: NAME`, `error: MESSAGE`, `error: aborted`.
 */
export interface ToolResultMessage {
  role: 'toolResult';
  toolCallId: string;
  content: string;
  toolName: string;
  isError: boolean;
  /** `ToolOutput.details`, for the application; never sent to a model. */
  details?: unknown;
  /** F1: what the tool handed the model besides its text (a screenshot, a chart, a PDF). */
  attachments?: Attachment[];
}

/**
 * One entry of the history. A valid history has each assistant message's calls followed, directly, by
 * one result each, in call order (R4): `user -> assistant -> toolResult -> assistant`. The loop refuses
 * a history it could not send to a model API (R21).
 */
export type AgentMessage = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

/** What a provider emits for one model call: `message_start`, deltas and calls, `message_end`. */
export type ProviderEvent =
  | { type: 'message_start' }
  | { type: 'text_delta'; text: string }
  /** P10: the model's reasoning as it streams (Anthropic thinking); shown, never sent back as text. */
  | { type: 'reasoning_delta'; text: string }
  /** P9: a chunk of a call's arguments as it streams, before its `tool_call`; `index` counts the reply's calls from 0. */
  | { type: 'tool_call_delta'; index: number; id?: string; name?: string; argumentsDelta: string }
  | { type: 'tool_call'; call: ToolCall }
  /**
   * `usage`: the API's token counts (R27); `reasoning`: the API's reasoning blocks, opaque, to send back (P10);
   * `failure`: why a call ended with `error`, for `withFallback` and the limiter (L1; every real provider sets it);
   * `model`: the model that answered, when a provider says (`withFallback` names the one it fell back to, L1).
   */
  | {
      type: 'message_end';
      stopReason: StopReason;
      errorMessage?: string;
      usage?: Usage;
      reasoning?: unknown[];
      failure?: ProviderFailure;
      model?: string;
    };

/** L1: what went wrong with a provider call, as `withFallback` and the limiter read it. */
export interface ProviderFailure {
  kind: 'http' | 'network' | 'timeout' | 'protocol' | 'refusal';
  status?: number;
  retryAfterMs?: number;
  message: string;
}

/** Token counts of a model call (R27); `turn_end` and `loop_end` carry the loop's running totals. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

/**
 * A JSON Schema that describes an object, as the model APIs take a tool's input: `type: 'object'`, and
 * any other keywords (`properties`, `required`, `additionalProperties`, `$defs`, …).
 *
 * ```ts
 * const schema: JsonSchemaObject = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
 * ```
 */
export interface JsonSchemaObject {
  type: 'object';
  properties?: Record<string, unknown>;
  required?: string[];
  [keyword: string]: unknown;
}

/**
 * What the model is told about a tool (R24): a series-style tool has `input`, which maps each parameter
 * (a required string) to its description; any other tool has `inputSchema`, the JSON Schema to send.
 * `ToolRegistry.getSpecs()` gives each spec exactly one of the two.
 */
export interface ToolSpec {
  name: string;
  description: string;
  input?: Record<string, string>;
  inputSchema?: JsonSchemaObject;
}

/** What a provider is called with: the history so far and the tools it may ask for. */
export interface ProviderInput {
  messages: readonly AgentMessage[];
  tools: readonly ToolSpec[];
  /** J1: answer in JSON of this schema, in the API's native structured-output mode (sent with no tools). */
  output?: { name: string; schema: JsonSchemaObject };
}

/**
 * One model call per subscription: a function from the conversation so far to a **cold**
 * Observable of events. Unsubscribing cancels the call.
 */
export type Provider = (input: ProviderInput) => Observable<ProviderEvent>;

/** What a tool may return instead of a plain string. */
export interface ToolOutput {
  content: string;
  /** F1: pictures, sounds and files for the model, with the text. */
  attachments?: Attachment[];
  isError?: boolean;
  /** Ask the loop to stop after this turn (it stops when every result of the turn asks). */
  terminate?: boolean;
  details?: unknown;
}

/** The second argument of every handler. */
export interface ToolContext {
  call: ToolCall;
  /** Aborts when the tool is torn down: unsubscribe, `options.signal`, or a timeout. */
  signal: AbortSignal;
  /** L3: the loop's `budget`, when it has one: give it to an inner loop (`agentTool`), which then charges it as it goes. */
  budget?: TokenLedger;
}

/**
 * L3: what a loop's `budget` is: a ledger of tokens charged with every provider call's usage. `TokenBudget` is the
 * library's; `ToolContext.budget` hands on the loop's own, to charge from an inner loop.
 */
export interface TokenLedger {
  /** The tokens allowed in all. */
  readonly maxTokens: number;
  /** Tokens charged so far. */
  readonly used: number;
  /** Tokens still allowed (never below 0): a loop starts no turn when it is 0. */
  readonly left: number;
  /** Charges one call's usage: its input and output tokens. */
  charge(usage: Usage): void;
}

/** What `beforeToolCall` decides for one call (H2). */
export type ToolDecision =
  /** Run the handler, on `input` when given (checked again; the history keeps the model's own call). */
  | { action: 'run'; input?: Record<string, unknown> }
  /** Do not run it: the result is `denied: REASON` (`isError: true`). */
  | { action: 'deny'; reason: string }
  /** Do not run it: `output` is the result (a cache, a canned reply). */
  | { action: 'answer'; output: string | ToolOutput };

/** H8, D3: what a person answers for a call that waits: `true` runs it as asked, `false` denies it (`denied: not approved`), or any H2 decision. */
export type ApprovalDecision = boolean | ToolDecision;

/** H8: one decision, for the call `toolCallId`. */
export interface ApprovalAnswer {
  toolCallId: string;
  decision: ApprovalDecision;
}

/**
 * H8: calls that wait for a person. A call `needsApproval` picks (after `beforeToolCall` let it run) takes the first
 * answer for its id from `decisions`; when none is there at once, the loop emits `tool_approval` and the call waits
 * (it alone, H1). `decisions` is subscribed per waiting call, so decisions known before the run (`of(...)`, a
 * `ReplaySubject`: the next run of a two-request protocol) answer without a `tool_approval`.
 */
export interface ToolApprovals {
  needsApproval: (call: ToolCall) => boolean;
  decisions: Observable<ApprovalAnswer>;
}

/** What a tool hook is told besides the call or the result (H2, H3). */
export interface HookContext {
  /** The turn of the call: 0 for calls resumed from a saved history (R22). */
  turn: number;
  /** The history as of the turn's start. */
  messages: readonly AgentMessage[];
  /** Aborts when the loop stops waiting for this hook (unsubscribe, `options.signal`), never after it answered. */
  signal: AbortSignal;
}

/** What a hook may give back (H1): a value now, a Promise, or an Observable whose first value counts. */
export type HookAnswer<T> = T | PromiseLike<T> | Observable<T>;

/** H2: asked once per known, valid call when it gets its slot, before `tool_start`; `void` runs it as asked. */
export type BeforeToolCall = (call: ToolCall, context: HookContext) => HookAnswer<ToolDecision | void>;

/** H3: sees each result of a call that reached `beforeToolCall`, before `tool_result`; what it returns replaces it, `void` keeps it. */
export type AfterToolCall = (result: ToolResultMessage, context: HookContext) => HookAnswer<ToolOutput | string | void>;

/**
 * H6: what each provider call sees (the model's view); the loop's own history stays whole. `lastUsage` (R34): the
 * `usage` the loop's previous provider call reported, if it reported one (none on a loop's first call).
 */
export type PrepareTurn = (
  input: ProviderInput,
  context: { turn: number; signal: AbortSignal; lastUsage?: Usage },
) => HookAnswer<ProviderInput & { compaction?: Compaction }>;

/**
 * S5, R34: what a `prepareTurn` summarised for its turn's model call, told with its answer (the provider never
 * sees it) and carried on that turn's `turn_end`: `summary` stands for the history's messages before index
 * `firstKept` (of the history prepareTurn was given, the start of `turn_end.messages`), its system messages excepted.
 */
export interface Compaction {
  summary: string;
  firstKept: number;
}

/** What a tool handler may return (R14). */
export type ToolReturn =
  | string
  | ToolOutput
  | PromiseLike<string | ToolOutput>
  | Observable<string | ToolOutput | ToolProgressValue>;

/**
 * A tool: its spec and its handler. Its input is described by one of `input` (the series' map: written as
 * in the series, it registers unchanged, R13), `inputSchema` (a JSON Schema), or `schema` (a Standard Schema
 * validator, which alone decides what the handler gets, R24; see `defineTool`):
 *
 * ```ts
 * const echo: Tool = { name: 'echo', description: 'Echoes text', input: { text: 'what to echo' }, handler: (input) => input.text };
 * ```
 */
export interface Tool extends ToolSpec {
  /**
   * Validates each call's input before the handler runs; the handler gets the validator's output (R24).
   * The model is told `inputSchema` when given, else the validator's own Standard JSON Schema.
   */
  schema?: StandardSchemaV1;
  // A method (bivariant parameters), so that a handler written as in the series,
  // `(input: Record<string, string>) => string`, still compiles.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  handler(input: Record<string, any>, context: ToolContext): ToolReturn;
}

/** Why the loop ended: the last stop reason, the cap (`maxTurns`), the tools (`terminated`), or the token budget spent (`budget`, L3). */
export type LoopEndReason = StopReason | 'maxTurns' | 'terminated' | 'budget';

/**
 * What the loop emits, in order: per turn `turn_start`, the provider's events as they arrive, each tool's
 * start, progress and result (results in completion order), `turn_end`; finally one `loop_end`. `Output` is the
 * type of a typed answer (J4), inferred from the loop's `output` option.
 */
export type LoopEvent<Output = unknown> =
  /** J2: `answer` on a turn that asks the model for the typed answer, with no tools. */
  | { type: 'turn_start'; turn: number; answer?: true }
  | ProviderEvent
  /**
   * H8: the call waits for a person's decision (`LoopOptions.approvals`); `messages` is the history to save at this
   * moment (as R29's), so that a next run given it and the decision resumes the call (R22).
   */
  | { type: 'tool_approval'; call: ToolCall; messages: readonly AgentMessage[] }
  /** R23: the call's handler is about to run (it has its slot and its input passed the checks). */
  | { type: 'tool_start'; call: ToolCall }
  | {
      type: 'tool_update';
      toolCallId: string;
      toolName: string;
      content: string;
      details?: unknown;
      /** A1: the inner loop's event that this update of an agent tool forwards (`agentTool`). */
      event?: LoopEvent;
    }
  /**
   * R29: `messages` is the history to save at this moment (a new array, which R22 resumes): the history before
   * the turn, the turn's assistant message as known now, then the turn's results so far, in call order.
   */
  | { type: 'tool_result'; message: ToolResultMessage; messages: readonly AgentMessage[] }
  | {
      type: 'turn_end';
      turn: number;
      assistant: AssistantMessage;
      toolResults: ToolResultMessage[];
      messages: readonly AgentMessage[];
      /** The loop's token counts so far, this turn included (R27). */
      usage: Usage;
      /** S5, R34: this turn's prepareTurn summarised the history (present only then). */
      compaction?: Compaction;
    }
  | {
      type: 'loop_end';
      reason: LoopEndReason;
      assistant: AssistantMessage;
      messages: readonly AgentMessage[];
      usage: Usage;
      /** J2: the typed answer, present when the loop was given `output` and the answer was valid. */
      output?: Output;
    };

/** Picks one member of {@link LoopEvent} by its `type`. */
export type LoopEventOf<T extends LoopEvent['type']> = Extract<LoopEvent, { type: T }>;

/** C1: a prompt joined the history; `messages` is the history with it. */
export interface UserMessageEvent {
  type: 'user_message';
  message: UserMessage;
  messages: readonly AgentMessage[];
}

/**
 * A prompt that never joined the history: the conversation's `abort$` (or its end) dropped it while it
 * waited. Each dropped prompt is told, in arrival order, so that a UI can put it back in the input box.
 */
export interface PromptDroppedEvent {
  type: 'prompt_dropped';
  message: UserMessage;
}

/** What a conversation emits (C1): its loops' events, each prompt as it joins the history, and each prompt it dropped. */
export type ConversationEvent<Output = unknown> = LoopEvent<Output> | UserMessageEvent | PromptDroppedEvent;

/**
 * A progress value of an Observable tool (R14): the loop shows it as a `tool_update` at once, and it is
 * never taken for the result. A registered symbol marks it, so that a copy of the library bundled twice
 * still knows its own progress values.
 */
export const PROGRESS: unique symbol = Symbol.for('rx-tool-loop.toolProgress') as never;

/** What {@link toolProgress} makes: a progress update, not a result. */
export interface ToolProgressValue {
  readonly [PROGRESS]: true;
  readonly content: string;
  readonly details?: unknown;
  /** A1: the inner loop's event an agent tool's progress forwards; the loop puts it on the `tool_update` as `event`. */
  readonly event?: LoopEvent;
}

/**
 * The Standard Schema interface (standardschema.dev), version 1: the `~standard` property that zod 4,
 * valibot and arktype put on their validators, so that a library can validate with any of them without
 * depending on one (R24). Written out here, as the spec invites, so the package adds no runtime dependency.
 *
 * ```ts
 * // a validator by hand: a city name, trimmed
 * const city: StandardSchemaV1<unknown, { city: string }> = {
 *   '~standard': {
 *     version: 1,
 *     vendor: 'by-hand',
 *     validate: (value) =>
 *       typeof (value as { city?: unknown })?.city === 'string'
 *         ? { value: { city: (value as { city: string }).city.trim() } }
 *         : { issues: [{ message: 'Required', path: ['city'] }] },
 *   },
 * };
 * ```
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1.Props<Input, Output>;
}

export declare namespace StandardSchemaV1 {
  /** What a validator carries under `~standard`. */
  export interface Props<Input = unknown, Output = Input> {
    readonly version: 1;
    readonly vendor: string;
    /** Synchronous or not, as the validator likes: the loop awaits a Promise (R24). */
    readonly validate: (value: unknown) => Result<Output> | Promise<Result<Output>>;
    /** Types only, for inference (`InferInput`, `InferOutput`); never there at run time. */
    readonly types?: Types<Input, Output> | undefined;
  }

  export type Result<Output> = SuccessResult<Output> | FailureResult;

  export interface SuccessResult<Output> {
    readonly value: Output;
    readonly issues?: undefined;
  }

  export interface FailureResult {
    readonly issues: ReadonlyArray<Issue>;
  }

  /** One problem with the value: `path` leads from the root to where it is (absent or empty: the root). */
  export interface Issue {
    readonly message: string;
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined;
  }

  export interface PathSegment {
    readonly key: PropertyKey;
  }

  export interface Types<Input = unknown, Output = Input> {
    readonly input: Input;
    readonly output: Output;
  }

  export type InferInput<Schema extends StandardSchemaV1> = NonNullable<Schema['~standard']['types']>['input'];
  export type InferOutput<Schema extends StandardSchemaV1> = NonNullable<Schema['~standard']['types']>['output'];
}

/**
 * Standard JSON Schema (standardschema.dev/json-schema): a validator that can also describe itself as
 * JSON Schema. zod 4 implements it; the registry uses `jsonSchema.input(...)` as what the model is told
 * when a `schema` tool gives no `inputSchema` of its own (R24).
 */
export interface StandardJSONSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardJSONSchemaV1.Props<Input, Output>;
}

export declare namespace StandardJSONSchemaV1 {
  export interface Props<Input = unknown, Output = Input> {
    readonly version: 1;
    readonly vendor: string;
    readonly types?: StandardSchemaV1.Types<Input, Output> | undefined;
    readonly jsonSchema: Converter;
  }

  export interface Converter {
    /** The JSON Schema of what the validator accepts: what a model must send. */
    readonly input: (options: Options) => Record<string, unknown>;
    readonly output: (options: Options) => Record<string, unknown>;
  }

  // `{} & string`: future targets, without losing the completion of the known ones
  // eslint-disable-next-line @typescript-eslint/ban-types
  export type Target = 'draft-2020-12' | 'draft-07' | 'openapi-3.0' | ({} & string);

  export interface Options {
    readonly target: Target;
    readonly libraryOptions?: Record<string, unknown> | undefined;
  }
}
