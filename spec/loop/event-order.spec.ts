import { TestScheduler } from 'rxjs/testing';
import { ProviderEvent, ProviderProtocolError, checkProviderEvents } from '../../src/index.js';
import { call, end, start, text } from '../support/events.js';

const values = {
  s: start,
  t: text('hi'),
  r: { type: 'reasoning_delta', text: 'hm' } as ProviderEvent,
  d: { type: 'tool_call_delta', index: 0, id: 'c1', name: 'read', argumentsDelta: '{"pa' } as ProviderEvent,
  c: call('read', {}, 'c1'),
  e: end('stop'),
};

function expectChecked(provider: string, checked: string, error?: string, subscription?: string): void {
  new TestScheduler((a, b) => expect(a).toEqual(b)).run(({ cold, expectObservable, expectSubscriptions }) => {
    const source = cold<ProviderEvent>(provider, values as Record<string, ProviderEvent>);
    expectObservable(source.pipe(checkProviderEvents())).toBe(checked, values, error === undefined ? undefined : new ProviderProtocolError(error));
    if (subscription !== undefined) expectSubscriptions(source.subscriptions).toBe(subscription);
  });
}

describe('checkProviderEvents (R10 event order)', () => {
  it('passes a well-ordered stream through unchanged', () => {
    expectChecked('-s-t-c-e-|', '-s-t-c-e-|');
  });

  it('P9, P10: reasoning and argument deltas are accepted between message_start and message_end', () => {
    expectChecked('-s-r-t-d-c-e-|', '-s-r-t-d-c-e-|');
    expectChecked('-d-s-e|', '-#', 'provider sent tool_call_delta before message_start');
    expectChecked('-s-e-r|', '-s-e-#', 'provider sent reasoning_delta after message_end');
  });

  it('errors at an event before message_start, and unsubscribes the provider', () => {
    expectChecked('-t-s-e|', '-#', 'provider sent text_delta before message_start', '^!');
  });

  it('errors at an event after message_end', () => {
    expectChecked('-s-e-t|', '-s-e-#', 'provider sent text_delta after message_end', '^----!');
  });

  it('errors at a second message_start', () => {
    expectChecked('-s-s-e|', '-s-#', 'provider sent a second message_start');
  });

  it('errors when the provider completes without message_end', () => {
    expectChecked('-s-t|', '-s-t#', 'provider completed without message_end');
  });

  it('passes a provider error through', () => {
    new TestScheduler((a, b) => expect(a).toEqual(b)).run(({ cold, expectObservable }) => {
      expectObservable(cold<ProviderEvent>('-s-#', values).pipe(checkProviderEvents())).toBe('-s-#', values);
    });
  });

  it.each([
    ['an unknown event type', { type: 'thinking_delta', text: 'x' }, 'provider sent an unknown event type: "thinking_delta"'],
    ['a non-string text', { type: 'text_delta', text: 42 }, 'provider sent a text_delta whose text is not a string'],
    ['a tool_call without an id', { type: 'tool_call', call: { name: 'x', input: {} } }, 'provider sent a tool_call without a string id and name'],
    ['an unknown stop reason', { type: 'message_end', stopReason: 'done' }, 'provider sent message_end with an unknown stop reason: "done"'],
    ['a reasoning_delta without text', { type: 'reasoning_delta' }, 'provider sent a reasoning_delta whose text is not a string'],
    ['a tool_call_delta without an index', { type: 'tool_call_delta', argumentsDelta: '{' }, 'provider sent a tool_call_delta without an index >= 0 and a string argumentsDelta'],
    ['a tool_call_delta with a negative index', { type: 'tool_call_delta', index: -1, argumentsDelta: '{' }, 'provider sent a tool_call_delta without an index >= 0 and a string argumentsDelta'],
    ['reasoning that is not an array', { type: 'message_end', stopReason: 'stop', reasoning: 'x' }, 'provider sent message_end whose reasoning is not an array'],
    ['null', null, 'provider sent null, which is not an event'],
  ])('errors at %s', (_label, bad, message) => {
    new TestScheduler((a, b) => expect(a).toEqual(b)).run(({ cold, expectObservable }) => {
      const source = cold<ProviderEvent>('-s-b-e|', { ...values, b: bad as unknown as ProviderEvent });
      expectObservable(source.pipe(checkProviderEvents())).toBe('-s-#', values, new ProviderProtocolError(message));
    });
  });

  it('lets extra fields on events through', () => {
    new TestScheduler((a, b) => expect(a).toEqual(b)).run(({ cold, expectObservable }) => {
      const extra = { s: { type: 'message_start', id: 'msg_1' }, e: { type: 'message_end', stopReason: 'stop', usage: 3 } };
      const source = cold<ProviderEvent>('-s-e|', extra as unknown as Record<string, ProviderEvent>);
      expectObservable(source.pipe(checkProviderEvents())).toBe('-s-e|', extra);
    });
  });
});
