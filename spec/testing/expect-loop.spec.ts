import { TestScheduler, type RunHelpers } from 'rxjs/testing';
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, end, expectLoop, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';

const events = { s: start, c: call('weather'), u: end('toolUse'), t: text('sunny'), e: end('stop') };
const legend = loopLegend(events, {
  1: 'turn_start 1',
  S: 'tool_start weather',
  R: 'tool_result weather: sunny',
  E: 'turn_end 1 (toolUse): user, assistant[weather], toolResult weather',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[weather], toolResult weather, assistant "sunny"',
  L: 'loop_end stop',
});

function run(toolLine: string, result = 'sunny'): (helpers: RunHelpers) => void {
  return (helpers) => {
    const { cold } = helpers;
    const provider = marbleProvider(cold('-s-c---u|', events), cold('-----s-t-e|', events));
    const registry = marbleTools({ weather: cold(toolLine, { R: result }) });
    expectLoop(helpers, runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'weather?' }] })).toBe(
      '1s-(cS)u(RE2)s-t-e(FL|)',
      legend,
    );
  };
}

const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('expectLoop (T5)', () => {
  it('T5: passes when the run draws the diagram', () => {
    expect(() => testScheduler().run(run('-----(R|)'))).not.toThrow();
  });

  it('T5: a mismatch reads as marble lines, one above the other', () => {
    expect(() => testScheduler().run(run('------(R|)'))).toThrow(
      ["expectLoop: the loop's line differs", '  expected: 1s-(cS)u(RE2)s-t-e(FL|)', '  actual:   1s-(cS)u-(RE2)s-t-e(FL|)'].join('\n'),
    );
  });

  it('T5: descriptions not in the legend get fresh letters, and the differing legend entries are listed', () => {
    let message = '';
    try {
      testScheduler().run(run('-----(R|)', 'rainy'));
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe(
      [
        "expectLoop: the loop's line differs",
        '  expected: 1s-(cS)u(RE2)s-t-e(FL|)',
        '  actual:   1s-(cS)u(AE2)s-t-e(FL|)',
        '  legend entries that differ:',
        '    - R: tool_result weather: sunny',
        '    + A: tool_result weather: rainy',
      ].join('\n'),
    );
  });
});

describe('a failing expectLoop shows why (T8)', () => {
  const ev = { s: start, c: call('search'), u: end('toolUse'), e: end('stop') };
  const searchLegend = loopLegend(ev, {
    1: 'turn_start 1',
    γ: 'tool_start search',
    R: 'tool_result search: hits',
    E: 'turn_end 1 (toolUse): user, assistant[search], toolResult search',
    2: 'turn_start 2',
    F: 'turn_end 2 (stop): user, assistant[search], toolResult search, assistant',
    L: 'loop_end stop',
  });
  const messages = [{ role: 'user' as const, content: 'go' }];
  const failure = (body: Parameters<TestScheduler['run']>[0]): string[] => {
    try {
      testScheduler().run(body);
    } catch (error) {
      return (error as Error).message.split('\n');
    }
    throw new Error('expectLoop passed');
  };
  const noTwinLines = (lines: string[]) => expect(lines.filter((line, i) => lines.indexOf(line) !== i)).toEqual([]);

  it('T8: events inside a group\'s span: the line that reads the same is not printed twice; which events, at which frames, inside which group; both sides frame by frame', () => {
    // search answers at frame 4, inside the span of the (cγ) group of frame 3: marble syntax draws it at frame 7
    const lines = failure((helpers) =>
      expectLoop(
        helpers,
        runEventedToolLoop({ provider: marbleProvider(helpers.cold('-s-c-----u|', ev), helpers.cold('-----s-e|', ev)), registry: marbleTools({ search: helpers.cold('-(R|)', { R: 'hits' }) }), messages }),
      ).toBe('1s-(cγ)R-u(E2)-s-e(FL|)', searchLegend),
    );
    noTwinLines(lines);
    expect(lines.slice(0, 5)).toEqual([
      "expectLoop: the loop's line differs",
      '  expected: 1s-(cγ)R-u(E2)-s-e(FL|)',
      '  actual:   the same line when drawn, but not the same events at the same frames (see the frames below)',
      '  the actual line cannot draw these events at their frames (a group takes as many frames as it has characters, so they are drawn later):',
      '    tool_result search: hits at frame 4 is inside the group (cγ) of frame 3, which takes frames 3-6',
    ]);
    expect(lines).toContain('  frame by frame (expected | actual):');
    expect(lines.find((line) => line.includes('frame 4: tool_result search: hits'))).toMatch(/^ {2}≠ +\| frame 4: tool_result search: hits$/);
    expect(lines.find((line) => line.includes('frame 3: tool_start search'))).toMatch(/^ {4}frame 3: tool_start search +\| frame 3: tool_start search$/);
  });

  it('T8: a letter the legend lacks is named as such, not `undefined: undefined`', () => {
    const lines = failure((helpers) =>
      expectLoop(helpers, runEventedToolLoop({ provider: marbleProvider(helpers.cold('-s-e|', ev)), registry: marbleTools({}), messages })).toBe('1s-X(GL|)', {
        ...searchLegend,
        G: 'turn_end 1 (stop): user, assistant',
      }),
    );
    noTwinLines(lines);
    expect(lines).toEqual([
      "expectLoop: the loop's line differs",
      '  expected: 1s-X(GL|)',
      '  actual:   1s-e(GL|)',
      '  letters of the expected line that the legend lacks:',
      '    X: not in the legend',
    ]);
    expect(lines.join('\n')).not.toContain('undefined');
  });

  it('T8: a run that has not completed by the end of virtual time says so, and names the Promise tool still running (T4) and the provider call still open', () => {
    const lines = failure((helpers) =>
      expectLoop(
        helpers,
        runEventedToolLoop({ provider: marbleProvider(helpers.cold('-s-c-----u', ev)), registry: marbleTools({ search: () => Promise.resolve('hits') }), messages }),
      ).toBe('1s-(cγ)--u(RE2)s-e(FL|)', searchLegend),
    );
    noTwinLines(lines);
    expect(lines.slice(0, 3)).toEqual(["expectLoop: the loop's line differs", '  expected: 1s-(cγ)--u(RE2)s-e(FL|)', '  actual:   1s-(cγ)--u']);
    expect(lines.slice(-3)).toEqual([
      '  the run had not completed by the end of virtual time (frame 9)',
      '    the tool search (call search, started at frame 3) is still running: a tool that returns a Promise never settles in virtual time (T4): give it a cold marble or of(value).pipe(delay(n))',
      '    the provider call of turn 1 (from frame 0) is still open: it sent message_end at frame 9 but has not completed',
    ]);
  });

  it('T8: a provider call that never sends message_end is named as open', () => {
    const lines = failure((helpers) => expectLoop(helpers, runEventedToolLoop({ provider: marbleProvider(helpers.cold('-s', ev)), registry: marbleTools({}), messages })).toBe('1s-e(GL|)', searchLegend));
    noTwinLines(lines);
    expect(lines.slice(-2)).toEqual([
      '  the run had not completed by the end of virtual time (frame 1)',
      '    the provider call of turn 1 (from frame 0) is still open: it has not sent message_end',
    ]);
  });

  it('T8: an error of another value reads the same when drawn: the lines are not printed twice, the frames show both errors', () => {
    const lines = failure((helpers) => expectLoop(helpers, helpers.cold('-#', {}, new Error('late'))).toBe('-#', {}));
    noTwinLines(lines);
    expect(lines).toContain('  actual:   the same line when drawn, but not the same events at the same frames (see the frames below)');
    expect(lines.find((line) => line.includes('frame 1: error: '))).toBe('  ≠ frame 1: error: error | frame 1: error: Error: late');
  });

  it('T8: a frame off: the two lines, one above the other, and nothing else', () => {
    const lines = failure(run('------(R|)'));
    noTwinLines(lines);
    expect(lines).toEqual(["expectLoop: the loop's line differs", '  expected: 1s-(cS)u(RE2)s-t-e(FL|)', '  actual:   1s-(cS)u-(RE2)s-t-e(FL|)']);
  });
});
