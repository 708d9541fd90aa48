import type { AssistantMessage, ConversationEvent, LoopEventOf, ProviderEvent, ToolCall } from '../types.js';
import { describeEvent } from './describe-event.js';
import { Letters, Mark, drawLine } from './marble-line.js';

/** One thing a recording saw: an event, the error or the completion, at its frame. */
export interface Seen {
  frame: number;
  kind: 'N' | 'E' | 'C';
  event?: ConversationEvent;
  error?: unknown;
}


interface ToolRun {
  call: ToolCall;
  /** Drawn frame of the `tool_start`: the tool's cold line starts there. */
  from: number;
  updates: { frame: number; content: string; letter: string }[];
  result?: { frame: number; message: LoopEventOf<'tool_result'>['message']; letter: string };
}

interface Turn {
  n: number;
  /** The provider's error, when it errored (R10: `provider error: MESSAGE`). */
  error?: string;
  from: number;
  events: { frame: number; event: ProviderEvent }[];
  runs: ToolRun[];
  /** Results of calls whose handler never ran (no `tool_start`). */
  refused: LoopEventOf<'tool_result'>['message'][];
  end?: { frame: number; assistant: AssistantMessage };
}

/**
 * The jest test file that replays a recorded run (T3): the provider's turns and the tools rebuilt as cold
 * marbles from the recorded events, each drawn at the frame the recording drew it at, and the run's own line
 * as the expectation. What a replay cannot rebuild (an abort, a broken event order) is said in a comment.
 */
export function replayTest(seen: Seen[], frames: number[], letters: Letters, diagram: string): string {
  const turns: Turn[] = [];
  let initial: LoopEventOf<'turn_end'>['messages'] | undefined;
  let endReason: string | undefined;
  let prompts = 0; // a conversation's (C1): the replay runs one loop, not the conversation
  seen.forEach(({ event }, i) => {
    if (event === undefined) return;
    const frame = frames[i]!;
    const turn = turns[turns.length - 1];
    const letter = letters.letterOf(describeEvent(event));
    switch (event.type) {
      case 'user_message':
        prompts++;
        return;
      case 'prompt_dropped':
        return; // the conversation's, not the loop's
      case 'turn_start':
        turns.push({ n: event.turn, from: frame, events: [], runs: [], refused: [] });
        return;
      case 'tool_start':
        // R23: the handler runs from here (a queued call waited for its slot; turn 0 has no tool_call)
        turn?.runs.push({ call: event.call, from: frame, updates: [] });
        return;
      case 'tool_update':
        turn?.runs.find((run) => run.call.id === event.toolCallId && run.result === undefined)?.updates.push({ frame, content: event.content, letter });
        return;
      case 'tool_result':
        {
          const run = turn?.runs.find((r) => r.call.id === event.message.toolCallId && r.result === undefined);
          if (run !== undefined) run.result = { frame, message: event.message, letter };
          // no handler ran: an unknown tool stays unknown; a known one (invalid input) is registered without runs
          else if (turn !== undefined) turn.refused.push(event.message);
        }
        return;
      case 'turn_end':
        if (turn !== undefined) turn.end = { frame, assistant: event.assistant };
        if (initial === undefined && event.turn === 0) {
          // R22: the saved history is this one without the results turn 0 made
          const made = new Set(event.toolResults.map((result) => result.toolCallId));
          initial = event.messages.filter((message) => message.role !== 'toolResult' || !made.has(message.toolCallId));
        }
        initial ??= event.messages.slice(0, event.messages.length - 1 - event.toolResults.length);
        return;
      case 'loop_end':
        initial ??= event.messages;
        endReason = event.reason;
        return;
      default:
        if (turn === undefined) return;
        turn.events.push({ frame: frame - turn.from, event });
    }
  });
  return writeTest({ turns, initial: initial ?? [], endReason, diagram, values: letters.legend(), letters, prompts });
}

interface TestParts {
  turns: Turn[];
  initial: readonly unknown[];
  endReason: string | undefined;
  diagram: string;
  values: Record<string, string>;
  letters: Letters;
  prompts: number;
}

function writeTest({ turns, initial, endReason, diagram, values, letters, prompts }: TestParts): string {
  const lines: [string, string][] = []; // diagram entries: name, marble
  const notes: string[] = [];
  let hooked = false; // a result only a hook makes: the replay has no hooks
  if (prompts > 0) notes.push(`the run was a conversation of ${prompts} prompts; this replay runs its turns as one loop, so its line differs at each prompt`);
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
  const toolValues: Record<string, unknown> = {};
  const toolRuns = new Map<string, string[]>(); // tool name -> diagram keys of its runs
  const unknownTools = new Set<string>();
  const terminated = endReason === 'terminated';

  for (const turn of turns) {
    const marks: Mark[] = turn.events.map(({ frame, event }) => ({ frame, kind: 'N', value: providerLetter(event) }));
    const end = turn.end;
    if (end !== undefined) {
      const endFrame = end.frame - turn.from;
      const sentEnd = turn.events.some(({ event }) => event.type === 'message_end');
      const { errorMessage } = end.assistant;
      if (!sentEnd && errorMessage?.startsWith('provider error: ')) {
        marks.push({ frame: endFrame, kind: 'E' });
        turn.error = errorMessage.slice('provider error: '.length);
      } else {
        const lastTool = turn.runs.some((run) => run.result?.frame === end.frame);
        const messageEnd = turn.events.find(({ event }) => event.type === 'message_end');
        marks.push({ frame: lastTool && messageEnd !== undefined ? messageEnd.frame : endFrame, kind: 'C' });
        if (!sentEnd && errorMessage !== undefined && errorMessage !== 'provider completed without message_end') {
          notes.push(`turn ${turn.n} ended with "${errorMessage}", which this replay does not reproduce`);
        }
      }
    } else {
      notes.push(`turn ${turn.n} did not end (the run was cut short): its provider line never completes`);
    }
    // turn 0 (R22) calls no provider: it has no line of its own, only its tools
    if (turn.n !== 0) lines.push([`turn${turn.n}`, indent(turn.from, drawLine(marks, (letter) => letter))]);

    for (const refused of turn.refused) {
      if (/^(denied: |error: (before|after)ToolCall failed: )/.test(refused.content)) hooked = true;
      if (refused.content === `unknown tool: ${refused.toolName}`) unknownTools.add(refused.toolName);
      else if (!refused.content.startsWith('error: duplicate tool call id: ')) toolRuns.set(refused.toolName, toolRuns.get(refused.toolName) ?? []);
    }
    turn.runs.forEach((run) => {
      const { result } = run;
      if (result?.message.content === 'error: aborted') notes.push(`the ${run.call.name} call ${run.call.id} was aborted; the replay never answers it`);
      const toolMarks: Mark[] = [];
      const update = run.updates;
      // R14: a value shows as progress when the next one arrives, so each arrives at the frame of the update before
      update.forEach((u, k) => toolMarks.push({ frame: k === 0 ? Math.max(0, u.frame - run.from - 1) : update[k - 1]!.frame - run.from, kind: 'N', value: u.letter }));
      for (const u of update) toolValues[u.letter] = u.content;
      if (result !== undefined && result.message.content !== 'error: aborted') {
        const at = result.frame - run.from;
        const valueAt = update.length > 0 ? update[update.length - 1]!.frame - run.from : at;
        toolMarks.push({ frame: valueAt, kind: 'N', value: result.letter }, { frame: at, kind: 'C' });
        const { content, isError } = result.message;
        toolValues[result.letter] = isError || terminated ? { content, ...(isError ? { isError } : {}), ...(terminated ? { terminate: true } : {}) } : content;
      }
      const runs = toolRuns.get(run.call.name) ?? [];
      const key = `${identifier(run.call.name)}${runs.length + 1}`;
      runs.push(key);
      toolRuns.set(run.call.name, runs);
      lines.push([key, indent(run.from, drawLine(toolMarks, (letter) => letter))]);
    });
  }
  for (const name of unknownTools) if (toolRuns.has(name)) notes.push(`${name} was unknown to some calls and known to others`);
  if (hooked) notes.push('the run had hooks (a denied call or a hook that failed), which this replay does not rebuild');

  const width = Math.max('loop'.length, ...lines.map(([key]) => key.length)) + 2;
  const pad = (key: string) => `${key}:`.padEnd(width);
  const own = Object.fromEntries(Object.entries(values).filter(([letter]) => ![...events.values()].some((e) => e.letter === letter)));
  const maxTurns = endReason === 'maxTurns' || turns.length > 8 ? `, maxTurns: ${turns.length}` : '';
  const tools = [...toolRuns].map(
    ([name, keys]) => `      ${JSON.stringify(name)}: nthRun([${keys.map((key) => `cold(diagram.${key}, values)`).join(', ')}]),`,
  );
  const providerTurns = turns
    .filter((turn) => turn.n !== 0)
    .map((turn) => `cold(diagram.turn${turn.n}, events${turn.error === undefined ? '' : `, new Error(${JSON.stringify(turn.error)})`})`)
    .join(', ');
  return [
    '// Recorded by recordMarbles (rx-tool-loop/testing): the run replayed in virtual time, one character a frame.',
    ...notes.map((note) => `// Note: ${note}.`),
    "import { Observable } from 'rxjs';",
    "import { TestScheduler } from 'rxjs/testing';",
    "import { runEventedToolLoop, type AgentMessage } from 'rx-tool-loop';",
    "import { described, loopLegend, marbleProvider, marbleTools } from 'rx-tool-loop/testing';",
    '',
    'const diagram = {',
    ...lines.map(([key, line]) => `  ${pad(key)}${JSON.stringify(line).replace(/^"|"$/g, "'")},`),
    `  ${pad('loop')}'${diagram}',`,
    '};',
    '',
    'const events = {',
    ...[...events.values()].map(({ letter, event }) => `  ${letter}: ${JSON.stringify(event)},`),
    '} as const;',
    `const values = ${JSON.stringify(toolValues)};`,
    `const loop = loopLegend(events, ${JSON.stringify(own)});`,
    '',
    '/** The n-th call of a tool plays its n-th run. */',
    'function nthRun<T>(runs: Observable<T>[]): () => Observable<T> {',
    '  let calls = 0;',
    '  return () => runs[calls++]!;',
    '}',
    '',
    "test('the recorded run', () => {",
    '  new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(({ cold, expectObservable }) => {',
    `    const provider = marbleProvider(${providerTurns});`,
    '    const registry = marbleTools({',
    ...tools,
    '    });',
    `    const messages: AgentMessage[] = ${JSON.stringify(initial)};`,
    `    const run = runEventedToolLoop({ provider, registry, messages${maxTurns} });`,
    '    expectObservable(run.pipe(described)).toBe(diagram.loop, loop);',
    '  });',
    '});',
    '',
  ].join('\n');
}

function indent(frame: number, line: string): string {
  return ' '.repeat(frame) + line;
}

function identifier(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_$]/g, '_');
  return /^[0-9]/.test(safe) ? `_${safe}` : safe;
}
