import { Subject } from 'rxjs';
import { LoopEvent, scriptedProvider } from '../src/index.js';
import { conversation } from '../examples/prompts-in-events-out.js';
import { answerTurn, call, only, toolTurn } from './support/events.js';

describe('examples/prompts-in-events-out', () => {
  it('carries the history from one prompt to the next, and stop$ cancels the running loop', () => {
    const prompts = new Subject<string>();
    const stop = new Subject<void>();
    const hanging = new Subject<never>();
    let turn = 0;
    const script = scriptedProvider([toolTurn(call('c1', 'current_time')), answerTurn('It is now.'), answerTurn('You are welcome.')]);
    const provider = (input: Parameters<typeof script>[0]) => (++turn <= 3 ? script(input) : hanging);

    const events: LoopEvent[] = [];
    let completed = false;
    conversation(prompts, stop, provider).subscribe({ next: (e) => events.push(e), complete: () => (completed = true) });

    prompts.next('What time is it?');
    prompts.next('Thanks!');
    expect(only(events, 'loop_end').map((e) => e.assistant.content)).toEqual(['It is now.', 'You are welcome.']);
    expect(script.inputs[2]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant', 'user']);

    prompts.next('And now?');
    expect(hanging.observed).toBe(true);
    stop.next();
    expect(hanging.observed).toBe(false);
    expect(completed).toBe(true);
  });
});
