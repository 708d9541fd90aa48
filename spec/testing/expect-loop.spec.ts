import { TestScheduler } from 'rxjs/testing';
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

function run(toolLine: string, result = 'sunny'): (helpers: Parameters<Parameters<TestScheduler['run']>[0]>[0]) => void {
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
  it('passes when the run draws the diagram', () => {
    expect(() => testScheduler().run(run('-----(R|)'))).not.toThrow();
  });

  it('a mismatch reads as marble lines, one above the other', () => {
    expect(() => testScheduler().run(run('------(R|)'))).toThrow(
      ["expectLoop: the loop's line differs", '  expected: 1s-(cS)u(RE2)s-t-e(FL|)', '  actual:   1s-(cS)u-(RE2)s-t-e(FL|)'].join('\n'),
    );
  });

  it('descriptions not in the legend get fresh letters, and the differing legend entries are listed', () => {
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
