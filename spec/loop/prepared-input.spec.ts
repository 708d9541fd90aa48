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
      expectObservable(prepared).toBe('---(a|)', { a: { input: answer, compaction: undefined } });
      flush();
      expect(turns).toEqual([3]);
    });
  });

  it('H6, R21: an answer that is no provider input is an error that says why', () => {
    const errors: string[] = [];
    preparedInput(input, 1, history, settings({ prepareTurn: () => of({ messages: [] } as unknown as ProviderInput) })).subscribe({ error: (error: Error) => errors.push(error.message) });
    expect(errors).toEqual(['expected { messages: AgentMessage[], tools: ToolSpec[] }, got {"messages":[]}, an object']);
  });

  it('R34, S5: a compaction told with the answer is taken off the provider’s input and handed on beside it, copied', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const view: ProviderInput = { messages: [{ role: 'user', content: 'SUMMARY' }], tools: [], output: { name: 'answer', schema: { type: 'object' } } };
      const compaction = { summary: 'SUMMARY', firstKept: 0 };
      const prepared = preparedInput(input, 2, history, settings({ prepareTurn: () => cold('--a|', { a: { ...view, compaction } }) }));
      expectObservable(prepared).toBe('--(a|)', { a: { input: view, compaction: { summary: 'SUMMARY', firstKept: 0 } } });
    });
    let told: unknown;
    preparedInput(input, 2, history, settings({ prepareTurn: () => ({ ...input, compaction: { summary: 'S', firstKept: 0 } }) })).subscribe((prepared) => (told = prepared));
    expect(Object.keys((told as { input: object }).input)).toEqual(['messages', 'tools']); // the provider never sees it
  });

  it('R34, S5, H6: a compaction that is none — no string summary, a firstKept that is no index of the history it was given — is an error that says why', () => {
    const errors: string[] = [];
    const bad = [{ summary: 1, firstKept: 0 }, { summary: 'S', firstKept: 1 }, { summary: 'S', firstKept: -1 }, { summary: 'S', firstKept: 0.5 }, 'S'];
    for (const compaction of bad) {
      preparedInput(input, 1, history, settings({ prepareTurn: () => ({ ...input, compaction }) as unknown as ProviderInput })).subscribe({ error: (error: Error) => errors.push(error.message) });
    }
    expect(errors).toEqual([
      'compaction must be { summary: string, firstKept: an index of the history prepareTurn was given (0 to 0) }, got {"summary":1,"firstKept":0}, an object',
      'compaction must be { summary: string, firstKept: an index of the history prepareTurn was given (0 to 0) }, got {"summary":"S","firstKept":1}, an object',
      'compaction must be { summary: string, firstKept: an index of the history prepareTurn was given (0 to 0) }, got {"summary":"S","firstKept":-1}, an object',
      'compaction must be { summary: string, firstKept: an index of the history prepareTurn was given (0 to 0) }, got {"summary":"S","firstKept":0.5}, an object',
      'compaction must be { summary: string, firstKept: an index of the history prepareTurn was given (0 to 0) }, got "S", a string',
    ]);
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
