/**
 * R29 widened: the view model's `messages` is a history to save after every event. At the `message_end` of a reply
 * with calls it holds the turn's assistant message, every call waiting — so a history saved while the turn's first
 * tool runs, in a process that then dies, resumes in a new process (R22) and ends as a run never cut.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { Subject, lastValueFrom, map, takeUntil, takeWhile, tap, toArray } from 'rxjs';
import type { AgentMessage, Provider, UserMessage } from '../../src/index.js';
import { conversation, runEventedToolLoop, toViewModel } from '../../src/index.js';
import { timeModel, timeTools } from './support/time-model.js';

jest.setTimeout(60_000);
const ask: UserMessage = { role: 'user', content: 'What time is it in Paris?' };

let folder = '';
let child = '';
beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), 'rx-tool-loop-resume-'));
  child = join(folder, 'resume-child.js');
  buildSync({ entryPoints: [join(__dirname, 'support/resume-child.ts')], bundle: true, platform: 'node', format: 'cjs', outfile: child, logLevel: 'error' });
});
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** Runs the child on a saved history; resolves with the JSON line it printed. */
function resumeInNewProcess(messages: readonly AgentMessage[]): Promise<{ turns: number[]; ran: string[]; messages: AgentMessage[] }> {
  const file = join(folder, `history-${Date.now()}.json`);
  writeFileSync(file, JSON.stringify(messages));
  return new Promise((resolve, reject) => {
    const process_ = spawn(process.execPath, [child, file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    process_.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    process_.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    process_.on('error', reject);
    process_.on('close', (code) => (code === 0 ? resolve(JSON.parse(stdout)) : reject(new Error(`the child exited with ${code}: ${stderr}`))));
  });
}

describe('R29 widened: a history to save after every event', () => {
  it('R29 widened: at the message_end of a reply with calls, messages hold the assistant message as turn_end will, every call waiting', async () => {
    // `clock` runs on (stuck), `zone` answers at its call, while the model still streams
    const run = () => runEventedToolLoop({ provider: timeModel(), registry: timeTools(true), messages: [ask] }).pipe(takeWhile((e) => e.type !== 'message_end', true));
    const events = await lastValueFrom(run().pipe(toArray()));
    const states = await lastValueFrom(run().pipe(toViewModel([ask]), toArray()));
    const end = events.at(-1)!;
    expect(end.type).toBe('message_end');
    const zone = events.find((e) => e.type === 'tool_result');
    if (zone?.type !== 'tool_result') throw new Error('no tool_result');
    const draft = zone.messages[1]; // the assistant message as known while it streamed
    expect(draft).toMatchObject({ role: 'assistant', stopReason: 'toolUse' });
    expect(states.at(-2)!.messages).toEqual(zone.messages);
    // the final message replaces the draft; zone's result stays; clock waits
    expect(states.at(-1)!.messages).toEqual([
      ask,
      { role: 'assistant', content: 'Let me look.', stopReason: 'toolUse', toolCalls: [{ id: 'clock_1', name: 'clock', input: {} }, { id: 'zone_1', name: 'zone', input: { city: 'Paris' } }] },
      zone.message,
    ]);
    expect(states.at(-1)!.status).toBe('tools');
  });

  it('R29 widened: the message at message_end is the one the loop\'s turn_end holds (text, calls, stop reason, reasoning)', async () => {
    const reasoning = [{ type: 'thinking', thinking: 'the time', signature: 'sig' }];
    const provider: Provider = (input) =>
      timeModel()(input).pipe(map((e) => (e.type === 'message_end' && e.stopReason === 'toolUse' ? { ...e, reasoning } : e)));
    const events = await lastValueFrom(runEventedToolLoop({ provider, registry: timeTools(), messages: [ask] }).pipe(toArray()));
    const states = await lastValueFrom(runEventedToolLoop({ provider, registry: timeTools(), messages: [ask] }).pipe(toViewModel([ask]), toArray()));
    const at = events.findIndex((e) => e.type === 'message_end');
    const turnEnd = events.find((e) => e.type === 'turn_end');
    if (turnEnd?.type !== 'turn_end') throw new Error('no turn_end');
    expect(turnEnd.assistant.reasoning).toEqual(reasoning);
    // both tools answered at their calls: at message_end the history is the turn_end's already
    expect(states[at]!.messages).toEqual(turnEnd.messages);
    expect(states[at - 1]!.messages).not.toEqual(turnEnd.messages); // the draft had no reasoning yet
  });

  it('R29 widened: toViewModel(history) checks its argument', () => {
    expect(() => toViewModel('nope' as unknown as AgentMessage[])).toThrow(new TypeError('toViewModel: history must be an array of messages, got string'));
  });

  it('R29 widened: a reply without calls changes no history at its message_end (the turn_end hands it out)', async () => {
    const answered: AgentMessage[] = [ask, { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'c', name: 'clock', input: {} }] }, { role: 'toolResult', toolCallId: 'c', toolName: 'clock', content: '12:00', isError: false }];
    const events = await lastValueFrom(runEventedToolLoop({ provider: timeModel(), registry: timeTools(), messages: answered }).pipe(toArray()));
    const states = await lastValueFrom(runEventedToolLoop({ provider: timeModel(), registry: timeTools(), messages: answered }).pipe(toViewModel(answered), toArray()));
    const at = events.findIndex((e) => e.type === 'message_end');
    expect(states[at]!.messages).toBe(states[at - 1]!.messages);
  });

  it('R29 widened: a conversation saved while its first tool runs, in a process that dies, resumes in a new process and ends as a run never cut', async () => {
    const uncut = await lastValueFrom(runEventedToolLoop({ provider: timeModel(), registry: timeTools(), messages: [ask] }).pipe(toArray()));
    const uncutEnd = uncut[uncut.length - 1]!;
    if (uncutEnd.type !== 'loop_end') throw new Error('no loop_end');

    // the first process: the view's history saved after every event; it dies while `clock` runs
    let saved: readonly AgentMessage[] = [];
    const died = new Subject<void>();
    const prompts = new Subject<string>();
    const run = prompts.pipe(
      conversation({ provider: timeModel(), registry: timeTools(true) }),
      toViewModel(),
      tap((state) => {
        saved = JSON.parse(JSON.stringify(state.messages)) as AgentMessage[];
        // the reply is over, `clock` still runs (zone answered at its call): the process dies now
        if (state.status === 'tools' && state.tools.some((tool) => tool.id === 'clock_1' && tool.state === 'running')) died.next();
      }),
      takeUntil(died),
    );
    const ended = lastValueFrom(run.pipe(toArray()));
    prompts.next(ask.content);
    await ended;
    expect(saved.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult']);
    const assistant = saved[1];
    expect(assistant?.role === 'assistant' && assistant.toolCalls?.map((c) => c.id)).toEqual(['clock_1', 'zone_1']);
    expect(saved[2]).toMatchObject({ toolCallId: 'zone_1' }); // clock's result is what the dead process never had

    const resumed = await resumeInNewProcess(saved);
    expect(resumed.turns).toEqual([0, 1]); // R22: turn 0 runs the waiting calls, then the model goes on
    expect(resumed.ran).toEqual(['clock_1']); // only the call still waiting
    expect(resumed.messages).toEqual(JSON.parse(JSON.stringify(uncutEnd.messages)));
  });
});
