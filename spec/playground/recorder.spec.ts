/**
 * V1, V3: in real time the page's lanes and its recording share one clock (playground/src/recorder.ts): the run
 * is recorded from the frames the loop lane drew, so the copied line is the drawn one whatever the wall clock
 * says. Here the page's clock is the test's own, and moves while no millisecond passes: a recorder with a
 * clock of its own would draw every event at frame 0.
 */
import { Subject } from 'rxjs';
import { type Provider, type ProviderEvent, runEventedToolLoop, scriptedProvider } from 'rx-tool-loop';
import { call, end, marbleTools, start, text } from 'rx-tool-loop/testing';
import { Recorder, laneLine } from '../../playground/src/recorder';

describe('the playground recorder in real time (V1, V3)', () => {
  it('V1, V3: the recorded line is the loop lane\'s, frame for frame, on the page\'s clock', () => {
    let frame = 0;
    const recorder = new Recorder(() => frame, { frameMs: 50 });
    const turns = [new Subject<ProviderEvent>(), new Subject<ProviderEvent>()];
    let calls = 0;
    const provider: Provider = () => turns[calls++]!;
    const run$ = recorder.loop(
      runEventedToolLoop({ provider: recorder.provider(provider), registry: marbleTools({ clock: '12:00' }), messages: [{ role: 'user', content: 'time?' }] }),
      'runEventedToolLoop',
    );
    let completed = false;
    run$.subscribe({ complete: () => (completed = true) });
    frame = 2;
    turns[0]!.next(start);
    frame = 4;
    turns[0]!.next(call('clock'));
    frame = 9;
    turns[0]!.next(end('toolUse'));
    turns[0]!.complete();
    frame = 14;
    turns[1]!.next(start);
    frame = 16;
    turns[1]!.next(text('noon'));
    frame = 18;
    turns[1]!.next(end('stop'));
    turns[1]!.complete();

    expect(completed).toBe(true);
    expect(recorder.recordingError).toBeUndefined();
    const drawn = laneLine(recorder.loopLane!);
    expect(drawn).toBe('1-s-(cγR)(eE2)s-t-(uFL|)');
    expect(recorder.recording?.diagram).toBe(drawn);
  });
});

describe('the playground draws answer turns (J5)', () => {
  it('J5: an answer turn’s provider call is a lane of its own named as one, and its turn_start is the turn’s digit, named in the legend', () => {
    const recorder = new Recorder(() => 0);
    const provider = scriptedProvider([[start, text('It is noon.'), end('stop')], [start, text('{"time":"12:00"}'), end('stop')]]);
    const output = { jsonSchema: { type: 'object' as const, properties: { time: { type: 'string' } }, required: ['time'] } };
    const run$ = recorder.loop(runEventedToolLoop({ provider: recorder.provider(provider), registry: marbleTools({}), messages: [{ role: 'user', content: 'time?' }], output }), 'runEventedToolLoop');
    run$.subscribe();
    expect(recorder.lanes.filter((lane) => lane.kind === 'provider').map((lane) => [lane.label, lane.caption])).toEqual([
      ['call 1', 'provider call 1'],
      ['answer call 2', 'provider call 2: the answer turn, asked for "answer" with no tools'],
    ]);
    expect(laneLine(recorder.loopLane!)).toBe('(1steE2sheFL|)'); // synchronous: one frame, turn 2 drawn with its digit
    expect(recorder.letters.legend()).toMatchObject({ '2': 'turn_start 2 answer', L: 'loop_end stop {"time":"12:00"}' });
  });
});
