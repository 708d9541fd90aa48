import { lastValueFrom, toArray } from 'rxjs';
import { ProviderEvent, ProviderInput, scriptedProvider } from '../../src/index.js';
import { answerTurn, call, end, start, text } from '../support/events.js';

const input = (content: string): ProviderInput => ({ messages: [{ role: 'user', content }], tools: [] });

describe('scriptedProvider', () => {
  it('plays turn n on its n-th subscription and records every input', async () => {
    const provider = scriptedProvider([[start, call('now', {}, 'c1'), end('toolUse')], answerTurn('done')]);
    const first = await lastValueFrom(provider(input('one')).pipe(toArray()));
    const second = await lastValueFrom(provider(input('two')).pipe(toArray()));
    expect(first.map((e) => e.type)).toEqual(['message_start', 'tool_call', 'message_end']);
    expect(second).toEqual(answerTurn('done'));
    expect(provider.inputs).toEqual([input('one'), input('two')]);
  });

  it('is cold: nothing is recorded or played before subscribe', () => {
    const provider = scriptedProvider([answerTurn('x')]);
    provider(input('unused'));
    expect(provider.inputs).toHaveLength(0);
  });

  it('hands out a fresh copy of every event, and is not changed by later edits of the script', async () => {
    const turn: ProviderEvent[] = [start, text('a'), end('stop')];
    const provider = scriptedProvider([turn, turn]);
    (turn[1] as { text: string }).text = 'edited';
    const first = await lastValueFrom(provider(input('1')).pipe(toArray()));
    const second = await lastValueFrom(provider(input('2')).pipe(toArray()));
    expect(first[1]).toEqual(text('a'));
    expect(first[1]).not.toBe(second[1]);
  });

  it('makes a turn from a function of the input', async () => {
    const provider = scriptedProvider([(seen) => answerTurn(`you said ${seen.messages[0]?.content}`)]);
    const events = await lastValueFrom(provider(input('hello')).pipe(toArray()));
    expect(events[1]).toEqual(text('you said hello'));
  });

  it('errors on a subscription beyond the script', async () => {
    const provider = scriptedProvider([answerTurn('only')]);
    await lastValueFrom(provider(input('1')).pipe(toArray()));
    await expect(lastValueFrom(provider(input('2')))).rejects.toThrow('scripted provider: no turn 2 (the script has 1)');
  });

  it('rejects a script that is not a list of turns', () => {
    expect(() => scriptedProvider([start] as unknown as ProviderEvent[][])).toThrow(TypeError);
  });
});
