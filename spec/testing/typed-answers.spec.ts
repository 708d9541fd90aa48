/** J5: answer turns seen — describeEvent's lines, and recordMarbles drawing them and replaying them as generated (T9). */
import { z } from 'zod';
import { ToolRegistry, conversation, runEventedToolLoop } from 'rx-tool-loop';
import { call, describeEvent, end, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { recorded, replay } from './support/replay';

const city = z.object({ city: z.string(), celsius: z.number().default(0) });

describe('J5 answer turns, seen', () => {
  it('J5: describeEvent writes an answer turn as `turn_start N answer` and a typed answer after loop_end’s reason', () => {
    expect(describeEvent({ type: 'turn_start', turn: 3, answer: true })).toBe('turn_start 3 answer');
    expect(describeEvent({ type: 'turn_start', turn: 3 })).toBe('turn_start 3');
    const end = { type: 'loop_end', reason: 'maxTurns', assistant: { role: 'assistant', content: '', stopReason: 'stop' }, messages: [], usage: { inputTokens: 0, outputTokens: 0 } } as const;
    expect(describeEvent({ ...end, output: { city: 'Oslo' } })).toBe('loop_end maxTurns {"city":"Oslo"}');
    expect(describeEvent(end)).toBe('loop_end maxTurns');
    expect(describeEvent({ ...end, output: { text: 'x'.repeat(80) } })).toMatch(/^loop_end maxTurns \{"text":"x+… #[0-9a-f]{8}$/);
  });

  it('J5: recordMarbles draws an answer turn with its digit, named in the legend, and the test it writes replays the run (cap, answer turn, repair)', () => {
    const recording = recorded(({ cold }) => {
      const turn1 = cold('-s-a---u|', { s: start, a: call('weather'), u: end('toolUse') });
      const turn2 = cold('-s-t-e|', { s: start, t: text('{"celsius":4}'), e: end('stop') });
      const turn3 = cold('-s-t-e|', { s: start, t: text('{"city":"Oslo"}'), e: end('stop') });
      const weather = () => cold('--(W|)', { W: 'cloudy' });
      return runEventedToolLoop({ provider: marbleProvider(turn1, turn2, turn3), registry: marbleTools({ weather }), messages: [{ role: 'user', content: 'Oslo?' }], maxTurns: 1, output: { schema: city } });
    });
    expect(Object.entries(recording.values).filter(([, line]) => /^turn_start|^loop_end/.test(line))).toEqual([
      ['1', 'turn_start 1'],
      ['2', 'turn_start 2 answer'],
      ['3', 'turn_start 3 answer'],
      ['L', 'loop_end maxTurns {"city":"Oslo","celsius":0}'],
    ]);
    expect(recording.test).toContain('const output = {');
    replay(recording.test);
  });

  it('J5: a conversation whose loops end with typed answers (one at once, one after an answer turn) replays as generated; an answer that never matched too', () => {
    const recording = recorded(({ cold }) => {
      const provider = marbleProvider(
        cold('-s-t-e|', { s: start, t: text('{"city":"Rome"}'), e: end('stop') }),
        cold('-s-t-e|', { s: start, t: text('Warm, I think.'), e: end('stop') }),
        cold('-s-t-e|', { s: start, t: text('{"city":"Oslo","celsius":4}'), e: end('stop') }),
        cold('-s-t-e|', { s: start, t: text('no'), e: end('stop') }),
        cold('-s-t-e|', { s: start, t: text('{}'), e: end('stop') }),
        cold('-s-t-e|', { s: start, t: text('[]'), e: end('stop') }),
      );
      return cold('a---------b----------------c|', { a: 'Rome?', b: 'Oslo?', c: 'Bergen?' }).pipe(conversation({ provider, registry: new ToolRegistry(), output: { schema: city } }));
    });
    expect(Object.values(recording.values).filter((line) => line.startsWith('loop_end'))).toEqual([
      'loop_end stop {"city":"Rome","celsius":0}',
      'loop_end stop {"city":"Oslo","celsius":4}',
      'loop_end error',
    ]);
    replay(recording.test);
  });

  it('J5: a run without output records and replays as before: no output in the test it writes', () => {
    const recording = recorded(({ cold }) => runEventedToolLoop({ provider: marbleProvider(cold('-s-t-e|', { s: start, t: text('{}'), e: end('stop') })), registry: new ToolRegistry(), messages: [{ role: 'user', content: 'hi' }] }));
    expect(recording.test).not.toContain('output');
    replay(recording.test);
  });
});
