import { StreamedCalls } from '../../src/ui/streamed-calls';

describe('StreamedCalls, the one bookkeeping of streamed calls for both front-end protocols (P9, U1, U2)', () => {
  it('P9: a call is held by its index until its id and name are known, then starts with the held text; the rest follows as it comes', () => {
    const calls = new StreamedCalls();
    expect(calls.delta(0, undefined, undefined, '{')).toBeUndefined();
    expect(calls.delta(1, 'b', 'g', '')).toEqual({ id: 'b', start: { name: 'g' }, text: '' });
    expect(calls.delta(0, 'a', 'f', '"x":1')).toEqual({ id: 'a', start: { name: 'f' }, text: '{"x":1' });
    expect(calls.delta(0, undefined, undefined, '}')).toEqual({ id: 'a', text: '}' });
    // a whole call that streamed sends nothing more, and gives what streamed to hold against its input
    expect(calls.whole({ id: 'a', name: 'f', input: { x: 1 } })).toEqual({ step: { id: 'a', text: '' }, args: '{"x":1}' });
    expect(calls.delta(0, undefined, undefined, 'late')).toBeUndefined();
    // b started but never came whole: cut
    expect(calls.clear()).toEqual(['b']);
    expect(calls.clear()).toEqual([]);
  });

  it('P9: a call that did not stream starts whole, with its input as its text; one whose id came late is matched to its pieces', () => {
    const calls = new StreamedCalls();
    expect(calls.whole({ id: 'c', name: 'h', input: { q: 2 } })).toEqual({ step: { id: 'c', start: { name: 'h' }, text: '{"q":2}' }, args: '{"q":2}' });
    expect(calls.delta(3, undefined, 'k', '{"r"')).toBeUndefined();
    expect(calls.whole({ id: 'd', name: 'k', input: { r: 3 } })).toEqual({ step: { id: 'd', start: { name: 'k' }, text: '{"r"' }, args: '{"r"' });
    expect(calls.clear()).toEqual([]);
  });
});
