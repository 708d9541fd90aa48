import { TestScheduler } from 'rxjs/testing';
import { described, end, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { runEventedToolLoop, type ProviderEvent } from 'rx-tool-loop';

const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('marbleProvider (T1)', () => {
  it('plays its n-th Observable on its n-th subscription, and records every input', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const events = { s: start, a: text('a'), b: text('b'), e: end('stop') };
      const provider = marbleProvider(cold('-s-a-e|', events), cold('-s-b-e|', events));
      const input = { messages: [], tools: [] };
      expectObservable(provider(input)).toBe('-s-a-e|', events);
      expectObservable(provider(input)).toBe('-s-b-e|', events);
      expect(provider.inputs).toEqual([input, input]);
    });
  });

  it('past the last turn: message_start, then message_end error "no scripted turn N"', () => {
    testScheduler().run(({ expectObservable }) => {
      const provider = marbleProvider();
      const values: Record<string, ProviderEvent> = { s: start, e: end('error', { errorMessage: 'no scripted turn 1' }) };
      expectObservable(provider({ messages: [], tools: [] })).toBe('(se|)', values);
    });
  });

  it('counts subscriptions, not calls: a call subscribed twice plays two turns', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const events = { s: start, e: end('stop') };
      const provider = marbleProvider(cold('-s-e|', events), cold('--s-e|', events));
      const once = provider({ messages: [], tools: [] });
      expectObservable(once).toBe('-s-e|', events);
      expectObservable(once).toBe('--s-e|', events);
      expect(provider.inputs).toHaveLength(1);
    });
  });
});

describe('marbleTools (T1)', () => {
  it('registers series-style tools: a value is what every call returns, a function is the handler', () => {
    const registry = marbleTools({ clock: '12:00', echo: (input) => String(input.text) });
    expect(registry.getSpecs()).toEqual([
      { name: 'clock', description: 'the clock tool', input: {} },
      { name: 'echo', description: 'the echo tool', input: {} },
    ]);
  });

  it('a cold marble as the value: each call subscribes it', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const events = { s: start, c: { type: 'tool_call', call: { id: 'w', name: 'weather', input: {} } } as ProviderEvent, u: end('toolUse'), e: end('stop') };
      const weather = cold('-----(R|)', { R: 'sunny' });
      const provider = marbleProvider(cold('-s-c---u|', events), cold('-----s-e|', events));
      const run = runEventedToolLoop({ provider, registry: marbleTools({ weather }), messages: [] });
      expectObservable(run.pipe(described)).toBe('1s-(cS)u(RE2)s-e(FL|)', {
        1: 'turn_start 1',
        s: 'message_start',
        c: 'tool_call weather',
        S: 'tool_start weather',
        R: 'tool_result weather: sunny',
        u: 'message_end toolUse',
        E: 'turn_end 1 (toolUse): assistant[weather], toolResult weather',
        2: 'turn_start 2',
        e: 'message_end stop',
        F: 'turn_end 2 (stop): assistant[weather], toolResult weather, assistant',
        L: 'loop_end stop',
      });
    });
  });
});
