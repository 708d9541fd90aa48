/** preparedInput: prepareTurn's answer as a source of the provider's input (H6, R36). */
import { of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgentMessage, ProviderInput } from '../../src/index.js';
import { preparedInput } from '../../src/loop/prepared-input.js';
import { settings } from './turn-support.js';

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const history: AgentMessage[] = [{ role: 'user', content: 'hi' }];
const input: ProviderInput = { messages: history.slice(), tools: [] };

describe('preparedInput (H6, R36: prepareTurn is a source)', () => {
  it('R36, H6: emits prepareTurn’s answer when it comes, then completes; it is asked on subscribe, with the turn', () => {
    scheduler().run(({ cold, expectObservable, flush }) => {
      const turns: number[] = [];
      const answer: ProviderInput = { messages: [{ role: 'system', content: 'be brief' }, ...history], tools: [] };
      const prepareTurn = (_input: ProviderInput, { turn }: { turn: number }) => (turns.push(turn), cold('---a|', { a: answer }));
      const prepared = preparedInput(input, 3, history, settings({ prepareTurn }));
      expect(turns).toEqual([]); // cold
      expectObservable(prepared).toBe('---(a|)', { a: answer });
      flush();
      expect(turns).toEqual([3]);
    });
  });

  it('H6, R21: an answer that is no provider input is an error that says why', () => {
    const errors: string[] = [];
    preparedInput(input, 1, history, settings({ prepareTurn: () => of({ messages: [] } as unknown as ProviderInput) })).subscribe({ error: (error: Error) => errors.push(error.message) });
    expect(errors).toEqual(['expected { messages: AgentMessage[], tools: ToolSpec[] }, got {"messages":[]}, an object']);
  });

  it('H5: unsubscribed before the answer, its signal aborts', () => {
    let signal: AbortSignal | undefined;
    const never = new Promise<ProviderInput>(() => undefined);
    const subscription = preparedInput(input, 1, history, settings({ prepareTurn: (_input, context) => ((signal = context.signal), never) })).subscribe();
    expect(signal?.aborted).toBe(false);
    subscription.unsubscribe();
    expect(signal?.aborted).toBe(true);
  });
});
