import type { ConversationOptions } from '../conversation/conversation.js';
import type { AgentMessage, ApprovalDecision, AssistantMessage, ConversationEvent, LoopEvent, ProviderEvent, ToolCall, ToolDecision, ToolOutput, ToolResultMessage, UserMessage } from '../types.js';
import { tokensOf } from '../limits/token-budget.js';
import { isPlainObject } from '../util/values.js';
import { describeEvent } from './describe-event.js';
import { Letters, MARBLE_ALPHABET, Mark, drawLine, drawnFrames } from './marble-line.js';

/** Why a replay runs slower than the run: events inside a group's span, one frame's goes, a replay line's own groups. */
export type Slower = 'groups' | 'goes' | 'lines';

/** The test file, and whether one of its lines could not draw an event at its frame (a group's span took it). */
export interface Replay {
  test: string;
  crowded: boolean;
}

/** One thing a recording saw: an event, the error or the completion, at its frame. */
export interface Seen {
  frame: number;
  /** Which synchronous go of the run it came in (real time; inside `TestScheduler.run`, its frame). */
  burst?: number;
  kind: 'N' | 'E' | 'C';
  event?: ConversationEvent;
  error?: unknown;
}

interface ToolRun {
  /** The call as `tool_start` carries it (a hook may have edited its input). */
  call: ToolCall;
  /** Drawn frame of the `tool_start`: the tool's cold line starts there. */
  from: number;
  /** Place in the recording, to tell a synchronous tool (its result right after its start) from a later one. */
  index: number;
  /** `event`: the inner event an agent tool's update forwards (A1). */
  updates: { frame: number; content: string; letter: string; index: number; event?: LoopEvent }[];
  result?: { frame: number; message: ToolResultMessage; letter: string; index: number };
}

interface Turn {
  n: number;
  from: number;
  /** J2: a turn that asked for the typed answer (not counted by maxTurns). */
  answer?: true;
  /** The provider's events, at frames counted from the turn's start. */
  events: { frame: number; event: ProviderEvent }[];
  /** The model's calls by id, with their frames. */
  calls: Map<string, { frame: number; call: ToolCall }>;
  runs: ToolRun[];
  /** Results of calls whose handler never ran (no `tool_start`). */
  refused: { frame: number; message: ToolResultMessage }[];
  /** H8: the calls that waited for a person (their `tool_approval`), by id, with the call as it would run. */
  waited: Map<string, { frame: number; call: ToolCall }>;
  end?: { frame: number; assistant: AssistantMessage; messages: readonly AgentMessage[] };
}

interface Loop {
  turns: Turn[];
  end?: { frame: number; reason: string };
  /** The frame of its abort (R11), if it was aborted. */
  abortAt?: number;
  /** Where in the recording its abort came. */
  abortIndex?: number;
  /** C2 `switch`: a prompt did the abort. */
  switched?: boolean;
}

/** A `beforeToolCall` answer as recorded: at which frame, and what (nothing: run as asked). */
interface Decision {
  at: number;
  decision?: ToolDecision;
}

const PROVIDER_EVENTS = new Set(['message_start', 'text_delta', 'tool_call', 'tool_call_delta', 'reasoning_delta', 'message_end']);

/**
 * The jest test file that replays a recorded run (T3, T9): the provider's turns and the tools rebuilt as cold
 * marbles from the recorded events, each drawn at the frame the recording drew it at; a `beforeToolCall` that
 * answers each call as recorded, at the recorded frame, when the run shows a hook (a denied or answered call,
 * an edited input, a call that started after its `tool_call`); an agent tool's inner loop as the tool's own line
 * of inner events, replayed through `agentTool` (A4, nested ones inside it); a conversation's prompts as a marble; an abort
 * at its frame; `options` passed on; and the run's own line as the expectation. What a replay cannot rebuild is
 * said in a comment.
 */
export function replayTest(seen: Seen[], frames: number[], letters: Letters, diagram: string, options: Partial<ConversationOptions> = {}, stretch = 1, why: Slower = 'groups', realTime = false): Replay {
  const values = letters.legend();
  const loops: Loop[] = [];
  const prompts: Prompt[] = [];
  const notes: string[] = [];
  if (stretch > 1 && why === 'goes') {
    notes.push(
      `some frames of the run had events of more than one go (timers of different sources in one frame), which a replay would play in its own order, so this replay runs ${stretch} times slower: each recorded frame is ${stretch} frames here, and each go of a frame has frames of its own, in the recorded order`,
    );
  } else if (stretch > 1 && why === 'lines') {
    notes.push(
      `some lines of this replay (a provider's turn, a tool, the prompts) have events closer than marble syntax can draw them, so this replay runs ${stretch} times slower: each recorded frame is ${stretch} frames here, and every event keeps its own frame`,
    );
  } else if (stretch > 1) {
    notes.push(
      `some events of the run are closer than marble syntax can draw them (inside a group's span), so this replay runs ${stretch} times slower: each recorded frame is ${stretch} frames here, and every event keeps its own frame`,
    );
  }
  let initial: readonly AgentMessage[] | undefined;
  // J5: the typed answers the loops ended with, by their JSON, when the run had `output` (an answer turn or an answer shows it)
  const answers = new Map<string, unknown>();
  let typed = false;
  let steered = false;
  let ended: { frame: number; kind: 'E' | 'C'; error?: unknown } | undefined;
  let count = 0; // events
  let lastFrame = -1;
  let spent = 0; // L3: the tokens every loop of the run charged, inner agents' included
  seen.forEach(({ event, kind, error }, i) => {
    const frame = frames[i]!;
    if (event === undefined) {
      ended = { frame, kind: kind === 'E' ? 'E' : 'C', error };
      return;
    }
    count++;
    lastFrame = frame;
    const loop = loops[loops.length - 1];
    const running = loop !== undefined && loop.end === undefined ? loop : undefined;
    const turn = running?.turns[running.turns.length - 1];
    const letter = letters.letterOf(describeEvent(event));
    switch (event.type) {
      case 'user_message':
        prompts.push({ frame, index: i, ...promptOf(event.message) });
        if (initial === undefined && loops.length === 0) initial = event.messages.slice(0, -1);
        if (running !== undefined && running.turns.length > 0) steered = true;
        if (loop?.end?.reason === 'aborted' && loop.end.frame === frame && loop.abortAt === frame && seen[i - 1]?.event?.type === 'loop_end') loop.switched = true;
        return;
      case 'prompt_dropped':
        // the conversation's, not the loop's: the replayed conversation drops it again, the prompt sent right before the press
        prompts.push({ frame, index: i, ...promptOf(event.message), dropped: true });
        return;
      case 'turn_start': {
        const owner = running ?? (loops[loops.length] = { turns: [] });
        owner.turns.push({ n: event.turn, from: frame, events: [], calls: new Map(), runs: [], refused: [], waited: new Map(), ...(event.answer === true && { answer: true as const }) });
        if (event.answer === true) typed = true;
        return;
      }
      case 'tool_approval':
        // H8: the call waits for a person from here: the replay's approvals ask for it, and answer as the run did
        turn?.waited.set(event.call.id, { frame, call: event.call });
        return;
      case 'tool_start':
        // R23: the handler runs from here (a queued call waited for its slot; turn 0 has no tool_call)
        turn?.runs.push({ call: event.call, from: frame, index: i, updates: [] });
        return;
      case 'tool_update':
        spent += innerSpent(event.event);
        turn?.runs.find((run) => run.call.id === event.toolCallId && run.result === undefined)?.updates.push({ frame, content: event.content, letter, index: i, ...(event.event !== undefined ? { event: event.event } : {}) });
        return;
      case 'tool_result': {
        const run = turn?.runs.find((r) => r.call.id === event.message.toolCallId && r.result === undefined);
        if (run !== undefined) run.result = { frame, message: event.message, letter, index: i };
        else turn?.refused.push({ frame, message: event.message });
        return;
      }
      case 'turn_end':
        if (turn !== undefined) turn.end = { frame, assistant: event.assistant, messages: event.messages };
        if (event.assistant.stopReason === 'aborted' && running !== undefined && running.abortAt === undefined) {
          running.abortAt = frame;
          running.abortIndex = i;
        }
        if (initial === undefined && event.turn === 0) {
          // R22: the saved history is this one without the results turn 0 made
          const made = new Set(event.toolResults.map((result) => result.toolCallId));
          initial = event.messages.filter((message) => message.role !== 'toolResult' || !made.has(message.toolCallId));
        }
        initial ??= event.messages.slice(0, event.messages.length - 1 - event.toolResults.length);
        return;
      case 'loop_end': {
        const owner = running ?? (loops[loops.length] = { turns: [] });
        owner.end = { frame, reason: event.reason };
        if ('output' in event) {
          typed = true;
          const key = answerKey(event.assistant.content);
          if (key !== undefined) answers.set(key, event.output);
        }
        spent += tokensOf(event.usage);
        if (event.reason === 'aborted' && owner.abortAt === undefined) {
          owner.abortAt = frame;
          owner.abortIndex = i;
        }
        initial ??= event.messages;
        return;
      }
      default:
        if (!PROVIDER_EVENTS.has(event.type)) {
          notes.push(`the run had a ${JSON.stringify(event.type)} event at frame ${frame}, which this replay does not rebuild`);
          return;
        }
        if (turn === undefined) return;
        if (event.type === 'tool_call') turn.calls.set(event.call.id, { frame, call: event.call });
        turn.events.push({ frame: frame - turn.from, event: event as ProviderEvent });
    }
  });
  const isConversation = prompts.length > 0;
  const policy = options.policy ?? (steered ? 'steer' : loops.some((loop) => loop.switched) ? 'switch' : 'queue');
  // L3: a run its budget ended is replayed on a budget of what it spent, which ends it where it ended
  const budget = loops.some((loop) => loop.end?.reason === 'budget') ? spent : undefined;
  return writeTest({ loops, prompts, notes, initial: initial ?? [], diagram, values, letters, isConversation, policy, options, ended, count, lastFrame, realTime, answers: typed ? [...answers] : undefined, budget });
}

/** A prompt of a conversation: where it joined (its `user_message`) or was dropped (its `prompt_dropped`). */
interface Prompt {
  frame: number;
  index: number;
  /** Its letter's key: the text, or the whole message as JSON when it has attachments. */
  content: string;
  /** What the replay sends: the text, or the message with its attachments (F4). */
  value: string | UserMessage;
  dropped?: true;
}

/** F4: a prompt as the replay sends it: its text, or the message when it has attachments. */
function promptOf(message: UserMessage): { content: string; value: string | UserMessage } {
  if (message.attachments === undefined) return { content: message.content, value: message.content };
  const value: UserMessage = { role: 'user', content: message.content, attachments: message.attachments };
  return { content: JSON.stringify(value), value };
}

/** F4: a result as the replay's tool (or hook) gives it: its text, or a `ToolOutput` when there is more to it. */
function outputOf({ content, isError, attachments }: ToolResultMessage, terminates: boolean): string | ToolOutput {
  if (!isError && !terminates && attachments === undefined) return content;
  return { content, ...(isError ? { isError } : {}), ...(attachments !== undefined ? { attachments } : {}), ...(terminates ? { terminate: true } : {}) };
}

/** A press of the conversation's `abort$`, on the prompts' line (so that a prompt it drops is sent right before it). */
const PRESS = '*';

interface TestParts {
  loops: Loop[];
  prompts: Prompt[];
  notes: string[];
  initial: readonly AgentMessage[];
  diagram: string;
  values: Record<string, string>;
  letters: Letters;
  isConversation: boolean;
  policy: string;
  options: Partial<ConversationOptions>;
  /** J5: the typed answers by their JSON, when the run had `output`. */
  answers: [string, unknown][] | undefined;
  ended: { frame: number; kind: 'E' | 'C'; error?: unknown } | undefined;
  count: number;
  lastFrame: number;
  /** Recorded in real time: each frame given is one synchronous go of the run. */
  realTime: boolean;
  /** L3: the budget to replay on, when the run's budget ended it: the tokens it spent. */
  budget?: number | undefined;
}

/** L3: what a budget was charged with for a call's usage (or a loop's totals): input and output tokens. */
/** L3: the tokens an inner loop spent, when the forwarded event is its `loop_end` (at any depth of agents). */
function innerSpent(event: LoopEvent | undefined): number {
  for (let inner = event; inner !== undefined; inner = inner.type === 'tool_update' ? inner.event : undefined) {
    if (inner.type === 'loop_end') return tokensOf(inner.usage);
  }
  return 0;
}

function writeTest(parts: TestParts): Replay {
  const { loops, prompts, notes, initial, diagram, values, letters, isConversation, policy, options, ended, count, lastFrame, realTime, answers } = parts;
  const lines: [string, string][] = []; // diagram entries: name, marble
  let crowded = false;
  /** A replay line of letters; one whose marks do not all fit at their frames makes the recording try a slower replay. */
  const line = (marks: readonly Mark[]): string => {
    if (drawnFrames(marks).some((frame, i) => frame !== marks[i]!.frame)) crowded = true;
    return drawLine(marks, (letter) => letter);
  };
  /** A4: each agent tool's runs, by name: its inner loop's events as the tool's own line, replayed through agentTool. */
  const agentRuns = new Map<string, string[]>();
  let leadRuns = false;
  const innerValues: [string, Record<string, LoopEvent>][] = [];
  const agentRun = (run: ToolRun): void => {
    const { updates, result } = run;
    const runs = agentRuns.get(run.call.name) ?? [];
    agentRuns.set(run.call.name, runs);
    const key = `${identifier(run.call.name)}${runs.length + 1}`;
    // a letter per distinct inner event (by JSON: two events that read the same may differ)
    const own = new Map<string, string>();
    const values: Record<string, LoopEvent> = {};
    const letterOf = (event: LoopEvent): string => {
      const json = JSON.stringify(event);
      let letter = own.get(json);
      if (letter === undefined) {
        letter = MARBLE_ALPHABET[own.size]!;
        own.set(json, letter);
        values[letter] = event;
      }
      return letter;
    };
    const inner = updates.filter((u) => u.event !== undefined).map((u) => ({ ...u, letter: letterOf(u.event!) }));
    innerValues.push([key, values]);
    // the inner loop ended (its loop_end forwarded): its line completes there; torn down, it never does
    const ended = inner.some((u) => u.event!.type === 'loop_end') && result !== undefined;
    const synchronous = ended && result.frame === run.from && result.index === run.index + 1 + updates.length && updates.every((u, k) => u.frame === run.from && u.index === run.index + 1 + k);
    if (synchronous) {
      runs.push(`of(${inner.map((u) => `${key}[${JSON.stringify(u.letter)}]!`).join(', ')})`);
      return;
    }
    // T9 (2): the inner events of the go of its start (an inner provider that answers at once) come as it is subscribed,
    // before anything else of that frame, as they did; the rest on its line
    let lead = 0;
    while (lead < inner.length && inner[lead]!.frame === run.from && inner[lead]!.index === run.index + 1 + lead) lead++;
    const marks: Mark[] = inner.slice(lead).map((u) => ({ frame: u.frame - run.from, kind: 'N', value: u.letter }));
    if (ended) marks.push({ frame: result.frame - run.from, kind: 'C' });
    const rest = `cold(diagram.${key}, ${key})`;
    if (lead > 0) leadRuns = true;
    runs.push(lead > 0 ? `concat(of(${inner.slice(0, lead).map((u) => `${key}[${JSON.stringify(u.letter)}]!`).join(', ')}), ${rest})` : rest);
    lines.push([key, indent(run.from, line(marks))]);
  };
  const events = new Map<string, { letter: string; event: ProviderEvent }>(); // by JSON
  const usedByEvents = new Set<string>();
  const providerLetter = (event: ProviderEvent): string => {
    const key = JSON.stringify(event);
    const known = events.get(key);
    if (known !== undefined) return known.letter;
    let letter = letters.letterOf(describeEvent(event));
    // two events that read the same (a call of one tool with other input) need letters of their own
    if (usedByEvents.has(letter)) letter = letters.letterOf(`${describeEvent(event)} #${events.size}`);
    usedByEvents.add(letter);
    events.set(key, { letter, event });
    return letter;
  };
  const toolRuns = new Map<string, string[]>(); // tool name -> the expressions of its runs
  const unknownTools = new Set<string>();
  const decisions = new Map<string, Decision[]>(); // call id -> its hook answers, in the order of its calls
  const failures: (Decision & { message: string })[] = []; // H6: prepareTurn, one per provider turn
  let hooked = false;
  let preparedFails = false;
  let protocolErrors = false;
  const providerTurns: string[] = [];
  const aborts: { frame: number; index: number }[] = [];
  const decide = (id: string, decision: Decision) => decisions.set(id, [...(decisions.get(id) ?? []), decision]);
  // H8: the calls that waited for a person, and each decision as given: for whom, at which frame, what
  const waitedIds = new Set<string>();
  const approved: { toolCallId: string; at: number; decision: ApprovalDecision }[] = [];
  const inputOf = (turn: Turn, id: string): unknown =>
    turn.calls.get(id)?.call.input ??
    initial.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : [])).find((c) => c.id === id)?.input;

  for (const loop of loops) {
    const lastTurn = loop.turns[loop.turns.length - 1];
    const terminated = loop.end?.reason === 'terminated';
    if (loop.abortAt !== undefined && !(loop.switched && policy === 'switch')) aborts.push({ frame: loop.abortAt, index: loop.abortIndex ?? Infinity });
    for (const turn of loop.turns) {
      const terminates = terminated && turn === lastTurn;
      const end = turn.end;
      const { errorMessage } = end?.assistant ?? {};
      const prepareFailed = turn.n !== 0 && turn.events.length === 0 && errorMessage?.startsWith('prepareTurn failed: ') === true && end !== undefined;
      if (turn.n !== 0) failures.push(prepareFailed ? { at: end!.frame, message: errorMessage!.slice('prepareTurn failed: '.length) } : { at: -1, message: '' });
      if (prepareFailed) preparedFails = true;
      else if (turn.n !== 0) {
        // turn 0 (R22) and a failed prepareTurn (H6) call no provider: no line of their own
        const marks: Mark[] = turn.events.map(({ frame, event }) => ({ frame, kind: 'N', value: providerLetter(event) }));
        let error: string | undefined;
        if (end !== undefined && end.assistant.stopReason !== 'aborted') {
          const endFrame = end.frame - turn.from;
          const lastTool = turn.runs.some((run) => run.result?.frame === end.frame);
          const last = turn.events[turn.events.length - 1];
          const messageEnd = turn.events.find(({ event }) => event.type === 'message_end')?.event as Extract<ProviderEvent, { type: 'message_end' }> | undefined;
          const explained = errorMessage === undefined || errorMessage === 'provider completed without message_end' || messageEnd?.errorMessage === errorMessage;
          if (!explained) {
            // R10, R20: the turn failed; its line fails the same way (a ProviderProtocolError's message is taken as it is)
            marks.push({ frame: lastTool && last !== undefined ? last.frame : endFrame, kind: 'E' });
            error = errorMessage.startsWith('provider error: ')
              ? `new Error(${JSON.stringify(errorMessage.slice('provider error: '.length))})`
              : `new ProviderProtocolError(${JSON.stringify(errorMessage)})`;
            if (error.startsWith('new ProviderProtocolError')) protocolErrors = true;
          } else {
            const sentEnd = messageEnd !== undefined;
            marks.push({ frame: lastTool && sentEnd ? turn.events.find(({ event }) => event.type === 'message_end')!.frame : endFrame, kind: 'C' });
          }
        } else if (end === undefined) notes.push(`turn ${turn.n} did not end (the run was cut short): its provider line never completes`);
        // an aborted turn's line never completes: the abort (R11) tears it down
        const key = `turn${providerTurns.length + 1}`;
        // T9 (4): in real time, a frame of the replay is one go of the run: what the provider sent in the go of its
        // turn's start it sent as it was subscribed (before an abort that followed in that frame), and so does the replay
        let lead = 0;
        while (realTime && lead < marks.length && marks[lead]!.kind === 'N' && marks[lead]!.frame === 0) lead++;
        const sent = marks.slice(0, lead).map((mark) => `events[${JSON.stringify(mark.value)}]`);
        const rest = marks.slice(lead);
        const restLine = `cold(diagram.${key}, events${error === undefined ? '' : `, ${error}`})`;
        if (lead > 0 && rest.length === 1 && rest[0]!.kind === 'C' && rest[0]!.frame === 0) providerTurns.push(`of(${sent.join(', ')})`);
        else {
          lines.push([key, indent(turn.from, line(rest))]);
          providerTurns.push(lead > 0 ? `concat(of(${sent.join(', ')}), ${restLine})` : restLine);
        }
        if (lead > 0) leadRuns = true;
      }

      // the calls as the hook saw them, in call order: what ran, what a hook or a check answered
      const startedAt = (id: string) => turn.calls.get(id)?.frame ?? turn.from;
      const asked: { at: number; id: string; decision: Decision }[] = [];
      // H8: a call that waited is let run by the hook as it waited (on the input its tool_approval shows), then decided by a person
      const waitedCall = (id: string, decided: ApprovalDecision | undefined, at: number): void => {
        const { frame, call } = turn.waited.get(id)!;
        const edited = JSON.stringify(inputOf(turn, id)) !== JSON.stringify(call.input);
        if (edited) hooked = true;
        asked.push({ at: startedAt(id), id, decision: { at: frame, ...(edited ? { decision: { action: 'run', input: call.input } } : {}) } });
        waitedIds.add(id);
        if (decided !== undefined) approved.push({ toolCallId: id, at, decision: decided });
      };
      for (const run of turn.runs) {
        const waited = turn.waited.get(run.call.id);
        if (waited !== undefined) {
          const edited = JSON.stringify(waited.call.input) !== JSON.stringify(run.call.input);
          waitedCall(run.call.id, edited ? { action: 'run', input: run.call.input } : true, run.from);
          continue;
        }
        const input = inputOf(turn, run.call.id);
        const edited = JSON.stringify(input) !== JSON.stringify(run.call.input);
        if (edited || run.from !== startedAt(run.call.id)) hooked = true;
        asked.push({ at: startedAt(run.call.id), id: run.call.id, decision: { at: run.from, ...(edited ? { decision: { action: 'run', input: run.call.input } } : {}) } });
      }
      for (const { frame, message } of turn.refused) {
        const { toolName, toolCallId, content, isError } = message;
        if (turn.waited.has(toolCallId)) {
          if (!toolRuns.has(toolName)) toolRuns.set(toolName, []); // registered, never run
          // still waiting when the abort came; else what the person (or a failure) decided
          const decided: ApprovalDecision | undefined =
            content === 'error: aborted'
              ? undefined
              : content === 'denied: not approved' && isError && !terminates
                ? false
                : content.startsWith('denied: ') && isError && !terminates
                  ? { action: 'deny', reason: content.slice('denied: '.length) }
                  : { action: 'answer', output: outputOf(message, terminates) };
          waitedCall(toolCallId, decided, frame);
          continue;
        }
        if (content === `unknown tool: ${toolName}`) {
          unknownTools.add(toolName);
          continue;
        }
        // made by the replay's own loop: a duplicate id (R28), an input that is not an object (R17)
        if (content.startsWith('error: duplicate tool call id: ') || !isPlainObject(inputOf(turn, toolCallId))) continue;
        hooked = true;
        if (!toolRuns.has(toolName)) toolRuns.set(toolName, []);
        const decision: Decision =
          content === 'error: aborted'
            ? { at: Infinity } // still waiting (for a hook or a slot) when the abort came
            : content.startsWith('denied: ') && isError && !terminates
              ? { at: frame, decision: { action: 'deny', reason: content.slice('denied: '.length) } }
              : { at: frame, decision: { action: 'answer', output: outputOf(message, terminates) } };
        asked.push({ at: startedAt(toolCallId), id: toolCallId, decision });
      }
      asked.sort((a, b) => a.at - b.at);
      for (const { id, decision } of asked) decide(id, decision);

      for (const run of turn.runs) {
        const { result, updates } = run;
        if (result?.message.content === 'error: aborted' && loop.abortAt === undefined) notes.push(`the ${run.call.name} call ${run.call.id} was aborted; the replay never answers it`);
        if (updates.some((u) => u.event !== undefined)) {
          agentRun(run);
          continue;
        }
        const valueOf = (letter: string): unknown => {
          if (result === undefined || letter !== result.letter) return updates.find((u) => u.letter === letter)?.content;
          return outputOf(result.message, terminates);
        };
        const answered = result !== undefined && result.message.content !== 'error: aborted';
        const own: Record<string, unknown> = {};
        for (const u of updates) own[u.letter] = valueOf(u.letter);
        if (answered) own[result.letter] = valueOf(result.letter);
        const runs = toolRuns.get(run.call.name) ?? [];
        toolRuns.set(run.call.name, runs);
        // a synchronous tool answers in the same go as its start: an Observable of its values, not a line
        const synchronous = answered && result.frame === run.from && result.index === run.index + 1 + updates.length && updates.every((u, k) => u.frame === run.from && u.index === run.index + 1 + k);
        if (synchronous) {
          runs.push(`of(${[...updates.map((u) => u.letter), result.letter].map((letter) => JSON.stringify(valueOf(letter))).join(', ')})`);
          continue;
        }
        const toolMarks: Mark[] = [];
        // R14: a value shows as progress when the next one arrives, so each arrives at the frame of the update before
        updates.forEach((u, k) => toolMarks.push({ frame: k === 0 ? Math.max(0, u.frame - run.from - 1) : updates[k - 1]!.frame - run.from, kind: 'N', value: u.letter }));
        if (answered) {
          const at = result.frame - run.from;
          const valueAt = updates.length > 0 ? updates[updates.length - 1]!.frame - run.from : at;
          toolMarks.push({ frame: valueAt, kind: 'N', value: result.letter }, { frame: at, kind: 'C' });
        }
        const key = `${identifier(run.call.name)}${runs.length + 1}`;
        runs.push(`cold(diagram.${key}, ${objectLiteral(own)})`);
        lines.push([key, indent(run.from, line(toolMarks))]);
      }
    }
  }
  for (const name of unknownTools) if (toolRuns.has(name)) notes.push(`${name} was unknown to some calls and known to others`);

  // a conversation's prompts as a marble (C1): each where it joined, the end with the last
  const promptLetters = new Map<string, string>();
  const promptValues = new Map<string, string | UserMessage>();
  // C2's abort$: a press where a loop was aborted or prompts were dropped, on the prompts' line, each dropped prompt sent right
  // before it (one line: a replay would play a line of its own before the prompts', the conversation subscribes abort$ first)
  const presses = isConversation ? [...aborts, ...prompts.filter((p) => p.dropped).map(({ frame, index }) => ({ frame, index: index + 0.5 }))] : [];
  const pressed = presses.filter((press, k) => !presses.some((other, j) => other.frame === press.frame && (other.index < press.index || (other.index === press.index && j < k))));
  if (isConversation) {
    const marks: (Mark & { index: number })[] = prompts.map(({ frame, index, content, value }) => {
      if (!promptLetters.has(content)) promptLetters.set(content, MARBLE_ALPHABET[promptLetters.size]!);
      promptValues.set(content, value);
      return { frame, index, kind: 'N', value: promptLetters.get(content)! };
    });
    marks.push(...pressed.map(({ frame, index }) => ({ frame, index, kind: 'N' as const, value: PRESS })));
    marks.sort((a, b) => a.frame - b.frame || a.index - b.index);
    // prompts$ completes where the conversation did (C3: once the prompts and the last loop have ended)
    marks.push({ frame: ended?.kind === 'C' ? ended.frame : marks[marks.length - 1]!.frame, index: Infinity, kind: 'C' });
    lines.unshift(['prompts', line(marks)]);
  }
  const pressesShown = pressed.length > 0;

  // the options the events do not show, passed on; those that would change the recorded results, left out
  const passed: string[] = [];
  const maxTurnsSeen = Math.max(0, ...loops.map((loop) => loop.turns.filter((turn) => turn.n !== 0 && turn.answer !== true).length));
  const maxTurns = options.maxTurns ?? (loops.some((loop) => loop.end?.reason === 'maxTurns') || maxTurnsSeen > 8 ? maxTurnsSeen : undefined);
  if (maxTurns !== undefined) passed.push(`maxTurns: ${maxTurns}`);
  if (options.toolExecution !== undefined) passed.push(`toolExecution: ${JSON.stringify(options.toolExecution)}`);
  if (options.maxConcurrency !== undefined) passed.push(`maxConcurrency: ${options.maxConcurrency === Infinity ? 'Infinity' : options.maxConcurrency}`);
  if (isConversation) passed.push(`policy: ${JSON.stringify(policy)}`);
  if (answers !== undefined) passed.push('output');
  if (parts.budget !== undefined) passed.push(`budget: new TokenBudget(${parts.budget})`);
  if (options.maxToolOutputChars !== undefined) notes.push(`maxToolOutputChars: ${options.maxToolOutputChars} is left out: the recorded results are already cut (R26)`);
  if (options.toolTimeoutMs !== undefined) notes.push(`toolTimeoutMs: ${options.toolTimeoutMs} is left out: a timed-out tool's line answers its recorded result (R16)`);
  if (options.afterToolCall !== undefined) notes.push('afterToolCall is left out: the tools answer the results it made');
  const signal = !isConversation && aborts.length > 0 ? aborts[0]!.frame : undefined;
  // T9 (4): aborted at frame 0 after the loop began (its turn_start came first): the abort comes right after the subscription, in its frame
  const abortAfterStart = signal === 0 && (loops[0]?.turns.length ?? 0) > 0;
  // a run that stopped before its loop_end (takeUntil, take): cut the replay where it stopped
  const lastLoop = loops[loops.length - 1];
  let cut = '';
  if (ended?.kind === 'E') notes.push(`the run errored at frame ${ended.frame} (${JSON.stringify(String(ended.error))}), which this replay does not rebuild`);
  else if (ended !== undefined && (lastLoop === undefined || lastLoop.end === undefined)) cut = ended.frame === lastFrame ? `take(${count}), ` : `takeUntil(timer(${ended.frame})), `;

  const width = Math.max('loop'.length, ...lines.map(([key]) => key.length)) + 2;
  const pad = (key: string) => `${key}:`.padEnd(width);
  const providerLetters = new Set([...events.values()].map((e) => e.letter));
  const own = Object.fromEntries(Object.entries(values).filter(([letter]) => !providerLetters.has(letter)));
  const tools = [...toolRuns].filter(([name]) => !agentRuns.has(name)).map(([name, runs]) => `      ${JSON.stringify(name)}: nthRun([${runs.join(', ')}]),`);
  const agents = [...agentRuns].map(([name, runs]) => `      .register(agentTool({ name: ${JSON.stringify(name)}, description: ${JSON.stringify(`the ${name} tool`)}, input: {}, agent: nthRun([${runs.join(', ')}]) }))`);
  const synchronousRuns = [...toolRuns.values(), ...agentRuns.values()].some((runs) => runs.some((run) => run.startsWith('of(')));
  const timed = hooked || preparedFails || waitedIds.size > 0; // the `at` helper: a value at its recorded frame
  const rxjs = [...(toolRuns.size > 0 || agentRuns.size > 0 || timed ? ['Observable'] : []), ...(timed ? ['NEVER', 'map', 'of', 'timer'] : []), ...(waitedIds.size > 0 ? ['defer', 'merge'] : []), ...(synchronousRuns ? ['of'] : []), ...(cut.startsWith('take(') ? ['take'] : cut !== '' ? ['takeUntil', 'timer'] : []), ...(signal !== undefined && signal > 0 ? ['timer'] : []), ...(pressesShown ? ['filter', 'share'] : []), ...(leadRuns ? ['concat', 'of'] : [])];
  const run = isConversation
    ? pressesShown
      ? `input.pipe(filter((prompt): prompt is string => prompt !== null), conversation({ ${['provider', 'registry', ...(initial.length > 0 ? ['messages'] : []), ...hookOptions(), 'abort$: input.pipe(filter((prompt) => prompt === null))', ...passed].join(', ')} }))`
      : `cold(diagram.prompts, prompts).pipe(conversation({ ${['provider', 'registry', ...(initial.length > 0 ? ['messages'] : []), ...hookOptions(), ...passed].join(', ')} }))`
    : `runEventedToolLoop({ ${['provider', 'registry', 'messages', ...hookOptions(), ...(signal !== undefined ? ['signal: controller.signal'] : []), ...passed].join(', ')} })`;
  function hookOptions(): string[] {
    return [...(hooked ? ['beforeToolCall'] : []), ...(waitedIds.size > 0 ? ['approvals'] : []), ...(preparedFails ? ['prepareTurn'] : [])];
  }
  const test = [
    '// Recorded by recordMarbles (rx-tool-loop/testing): the run replayed in virtual time, one character a frame.',
    ...notes.map((note) => `// Note: ${note}.`),
    `import { ${[...new Set(rxjs)].sort().join(', ')} } from 'rxjs';`,
    "import { TestScheduler } from 'rxjs/testing';",
    `import { ${[...(agentRuns.size > 0 ? ['agentTool'] : []), isConversation ? 'conversation' : 'runEventedToolLoop', ...(isConversation && initial.length === 0 ? [] : ['type AgentMessage']), ...(agentRuns.size > 0 ? ['type LoopEvent'] : []), ...(hooked ? ['type ToolDecision'] : []), ...(waitedIds.size > 0 ? ['type ApprovalDecision'] : []), ...(protocolErrors ? ['ProviderProtocolError'] : []), ...(parts.budget !== undefined ? ['TokenBudget'] : [])].join(', ')} } from 'rx-tool-loop';`,
    "import { described, loopLegend, marbleProvider, marbleTools } from 'rx-tool-loop/testing';",
    '',
    'const diagram = {',
    ...lines.map(([key, line]) => `  ${pad(key)}${quoted(line)},`),
    `  ${pad('loop')}${quoted(diagram)},`,
    '};',
    '',
    'const events = {',
    ...[...events.values()].map(({ letter, event }) => `  ${key(letter)}: ${JSON.stringify(event)},`),
    '} as const;',
    ...(isConversation ? [`const prompts = ${objectLiteral({ ...Object.fromEntries([...promptLetters].map(([content, letter]) => [letter, promptValues.get(content)])), ...(pressesShown ? { [PRESS]: null } : {}) })};${pressesShown ? ` // ${PRESS}: a press of abort$` : ''}`] : []),
    ...innerValues.map(([key, values]) => `/** The inner loop of ${key}: each event of it, as the agent tool forwarded it (A4). */\nconst ${key}: Record<string, LoopEvent> = ${objectLiteral(values)};`),
    `const loop = loopLegend(events, ${JSON.stringify(own)});`,
    ...(answers === undefined
      ? []
      : [
          '',
          '/** J2: the typed answers as recorded — the one each loop ended with is valid (the recorded output), any other answer is not. */',
          `const answers = new Map<string, unknown>(${JSON.stringify(answers)});`,
          'const output = {',
          "  jsonSchema: { type: 'object' as const },",
          "  schema: { '~standard': { version: 1 as const, vendor: 'recorded', validate: (value: unknown) => (answers.has(JSON.stringify(value)) ? { value: answers.get(JSON.stringify(value)) } : { issues: [{ message: 'not the answer the run ended with' }] }) } },",
          '};',
        ]),
    ...(hooked
      ? [
          '',
          '/** H2: how beforeToolCall answered each call, by call id in the order of its calls: at which frame, and what (nothing: run as asked). */',
          'const decisions: Record<string, { at: number; decision?: ToolDecision }[]> = {',
          ...[...decisions].map(([id, list]) => `  ${JSON.stringify(id)}: [${list.map(decisionLiteral).join(', ')}],`),
          '};',
        ]
      : []),
    ...(waitedIds.size > 0
      ? [
          '',
          '/** H8: the calls that waited for a person, and each decision as given: for which call, at which frame, what. */',
          `const waited = new Set(${JSON.stringify([...waitedIds])});`,
          'const approved: { toolCallId: string; at: number; decision: ApprovalDecision }[] = [',
          ...approved.map(({ toolCallId, at, decision }) => `  { toolCallId: ${JSON.stringify(toolCallId)}, at: ${at}, decision: ${JSON.stringify(decision)} },`),
          '];',
        ]
      : []),
    ...(preparedFails
      ? ['', '/** H6: each provider turn\'s prepareTurn: where it failed, at which frame and with which message (at -1: it passed). */', `const prepared = ${JSON.stringify(failures)};`]
      : []),
    '',
    ...(toolRuns.size === 0 && agentRuns.size === 0
      ? []
      : ['/** The n-th call of a tool plays its n-th run. */', 'function nthRun<T>(runs: Observable<T>[]): () => Observable<T> {', '  let calls = 0;', '  return () => runs[calls++]!;', '}', '']),
    "test('the recorded run', () => {",
    '  const testScheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));',
    '  testScheduler.run(({ cold, expectObservable }) => {',
    ...(timed
      ? [
          '    /** `value` at `frame` (at once when that frame has come; never for Infinity): when the recorded run had it. */',
          '    const at = <T>(frame: number, value: T): Observable<T> =>',
          '      frame === Infinity ? NEVER : frame <= testScheduler.now() ? of(value) : timer(frame - testScheduler.now()).pipe(map(() => value));',
        ]
      : []),
    ...(hooked
      ? [
          '    const asked = new Map<string, number>();',
          '    const beforeToolCall = ({ id }: { id: string }) => {',
          '      const n = asked.get(id) ?? 0;',
          '      asked.set(id, n + 1);',
          '      const answer = decisions[id]?.[n] ?? { at: 0 };',
          '      return at(answer.at, answer.decision);',
          '    };',
        ]
      : []),
    ...(waitedIds.size > 0
      ? [
          '    // each waiting call subscribes decisions: the decisions still to come, each at its recorded frame',
          '    const approvals = {',
          '      needsApproval: ({ id }: { id: string }) => waited.has(id),',
          '      decisions: defer(() => merge(...approved.filter((a) => a.at > testScheduler.now()).map(({ toolCallId, at: frame, decision }) => at(frame, { toolCallId, decision })))),',
          '    };',
        ]
      : []),
    ...(preparedFails
      ? [
          '    let turns = 0;',
          '    const prepareTurn = <T>(input: T): Observable<T> => {',
          '      const failure = prepared[turns++];',
          '      if (failure === undefined || failure.at < 0) return of(input);',
          '      return at(failure.at, input).pipe(map(() => { throw new Error(failure.message); }));',
          '    };',
        ]
      : []),
    ...(signal !== undefined
      ? ['    const controller = new AbortController(); // R11: the run was aborted here', signal > 0 ? `    timer(${signal}).subscribe(() => controller.abort());` : abortAfterStart ? '    // aborted in frame 0, after its first events: scheduled below, after the subscription' : '    controller.abort();']
      : []),
    `    const provider = marbleProvider(${providerTurns.join(', ')});`,
    '    const registry = marbleTools({',
    ...tools,
    agents.length === 0 ? '    });' : '    })',
    ...agents.map((line, i) => (i === agents.length - 1 ? `${line};` : line)),
    ...(isConversation && initial.length === 0 ? [] : [`    const messages: AgentMessage[] = ${JSON.stringify(initial)};`]),
    ...(pressesShown ? ['    const input = cold(diagram.prompts, prompts).pipe(share()); // the prompts and the presses of abort$'] : []),
    `    const run = ${run};`,
    `    expectObservable(run.pipe(${cut}described)).toBe(diagram.loop, loop);`,
    ...(abortAfterStart ? ['    testScheduler.schedule(() => controller.abort()); // frame 0, after the subscription scheduled above'] : []),
    '  });',
    '});',
    '',
  ].join('\n');
  return { test, crowded };
}

function decisionLiteral({ at, decision }: Decision): string {
  const when = at === Infinity ? 'Infinity' : String(at);
  return decision === undefined ? `{ at: ${when} }` : `{ at: ${when}, decision: ${JSON.stringify(decision)} }`;
}

/** A string as a single-quoted literal. */
function quoted(text: string): string {
  return `'${JSON.stringify(text).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
}

/** An object key: bare where it is an identifier or a digit, else quoted. */
function key(letter: string): string {
  return /^(?:[\p{L}_$][\p{L}\p{N}_$]*|[0-9])$/u.test(letter) ? letter : JSON.stringify(letter);
}

function objectLiteral(record: Record<string, unknown>): string {
  const entries = Object.entries(record).map(([letter, value]) => `${key(letter)}: ${JSON.stringify(value)}`);
  return entries.length === 0 ? '{}' : `{ ${entries.join(', ')} }`;
}

function indent(frame: number, line: string): string {
  return ' '.repeat(frame) + line;
}

function identifier(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_$]/g, '_');
  return /^[0-9]/.test(safe) ? `_${safe}` : safe;
}

/** J5: an answer's text as the key the replay's validator looks it up by (its JSON, written again), or none when it is no JSON. */
function answerKey(text: string): string | undefined {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return undefined;
  }
}
