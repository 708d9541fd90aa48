/** resumeTurn: turn 0 of a resumed run as the source of its parts, into the same phases as any turn (R22, R36). */
import { map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgentMessage, LoopEvent } from '../../src/index.js';
import { ToolRegistry } from '../../src/index.js';
import { draftTurn } from '../../src/loop/draft-turn.js';
import { resumeTurn, savedTurn } from '../../src/loop/resume-turn.js';
import { runTools } from '../../src/loop/run-tools.js';
import { callOf, tool } from '../support/events.js';
import { partLine, request, settings } from './turn-support.js';

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const saved = (): AgentMessage[] => [
  { role: 'user', content: 'check all' },
  { role: 'assistant', content: 'Checking.', stopReason: 'toolUse', toolCalls: [callOf('c1', 'weather'), callOf('c2', 'weather'), callOf('c3', 'weather')] },
  // saved while the tools ran: c2 had answered
  { role: 'toolResult', toolCallId: 'c2', toolName: 'weather', content: 'rain (earlier)', isError: false },
];

function line(event: LoopEvent): string {
  switch (event.type) {
    case 'turn_start':
    case 'turn_end':
      return `${event.type} ${event.turn}`;
    case 'tool_start':
      return `tool_start ${event.call.id}`;
    case 'tool_result':
      return `tool_result ${event.message.toolCallId}: ${event.messages.map((m) => (m.role === 'toolResult' ? m.toolCallId : m.role)).join(', ')}`;
    default:
      return event.type;
  }
}

describe('resumeTurn (R22, R36: turn 0 is a source)', () => {
  it('R36, R22: begin (the saved message and its slots), then each call without a saved result; no model', () => {
    const found = savedTurn(saved())!;
    expect(found.at).toBe(1);
    const lines: string[] = [];
    resumeTurn(request(0, saved().slice(0, 1)), found)
      .pipe(map(partLine))
      .subscribe((part) => lines.push(part));
    expect(lines).toEqual(['begin 0', 'call 0 c1', 'call 2 c3']);
  });

  it('R22: no turn 0 for a history whose last assistant message has every result, or asks for none', () => {
    const answered: AgentMessage[] = [...saved(), { role: 'toolResult', toolCallId: 'c1', toolName: 'weather', content: 'sun', isError: false }, { role: 'toolResult', toolCallId: 'c3', toolName: 'weather', content: 'sun', isError: false }];
    expect(savedTurn(answered)).toBeUndefined();
    expect(savedTurn([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello', stopReason: 'stop' }])).toBeUndefined();
  });

  it('R36, R22, R29: into runTools → draftTurn as the loop composes them: the missing calls run; each result carries the history with the saved one; turn_end in call order', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const weather = cold<string>('-----(s|)');
      const loop = settings({ registry: new ToolRegistry().register(tool('weather', () => weather)) });
      const turn = resumeTurn(request(0, saved().slice(0, 1)), savedTurn(saved())!).pipe(runTools(loop), draftTurn(loop));
      expectObservable(turn.pipe(map(line))).toBe('(abc)(def|)', {
        a: 'turn_start 0',
        b: 'tool_start c1',
        c: 'tool_start c3',
        d: 'tool_result c1: user, assistant, c1, c2',
        e: 'tool_result c3: user, assistant, c1, c2, c3',
        f: 'turn_end 0',
      });
    });
  });
});
