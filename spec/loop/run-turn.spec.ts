import { Observable, of } from 'rxjs';
import { LoopEvent, ProviderEvent, ToolRegistry } from '../../src/index.js';
import { LoopSettings, runTurn } from '../../src/loop/run-turn.js';
import { TurnOutcome } from '../../src/loop/turn-draft.js';
import { end, start, text } from '../support/events.js';

function settings(provider: LoopSettings['provider'], signal?: AbortSignal): LoopSettings {
  return { provider, registry: new ToolRegistry(), maxTurns: 8, concurrency: Infinity, toolTimeoutMs: Infinity, signal };
}

function play(loop: LoopSettings): { events: LoopEvent[]; outcomes: TurnOutcome[] } {
  const events: LoopEvent[] = [];
  const outcomes: TurnOutcome[] = [];
  runTurn(1, [{ role: 'user', content: 'hi' }], loop, (event) => events.push(event)).subscribe((o) => outcomes.push(o));
  return { events, outcomes };
}

describe('runTurn', () => {
  it('stops listening to a synchronous provider at its first broken event', () => {
    let emittedAfter = 0;
    const provider = () =>
      new Observable<ProviderEvent>((subscriber) => {
        subscriber.next(start());
        subscriber.next(start()); // a second message_start: the turn ends here
        subscriber.next(text('late'));
        emittedAfter++;
        subscriber.next(end('stop'));
        subscriber.complete();
      });
    const { events, outcomes } = play(settings(provider));
    expect(events.map((e) => e.type)).toEqual(['turn_start', 'message_start', 'turn_end']);
    expect(outcomes[0]!.assistant).toMatchObject({ content: '', stopReason: 'error', errorMessage: 'provider sent a second message_start' });
    expect(emittedAfter).toBe(1); // the provider went on; nothing it sent after the fault was taken
  });

  it('does not call the provider when the signal is already aborted as the turn starts', () => {
    const controller = new AbortController();
    controller.abort();
    const provider = jest.fn(() => of(start(), end('stop')));
    const { events, outcomes } = play(settings(provider, controller.signal));
    expect(provider).not.toHaveBeenCalled();
    expect(events.map((e) => e.type)).toEqual(['turn_start', 'turn_end']);
    expect(outcomes[0]!.assistant.stopReason).toBe('aborted');
  });

  it('emits the outcome after turn_end, with the loop own history', () => {
    const { events, outcomes } = play(settings(() => of(start(), text('ok'), end('stop'))));
    const turnEnd = events[events.length - 1]!;
    expect(turnEnd.type).toBe('turn_end');
    if (turnEnd.type !== 'turn_end') return;
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]!.history).toEqual(turnEnd.messages);
    expect(outcomes[0]!.history).not.toBe(turnEnd.messages);
  });
});
