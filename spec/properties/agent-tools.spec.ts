/**
 * A1–A4 on generated trees of agent tools, nested up to three deep, in virtual time: each loop's model streams
 * text and asks for leaf tools (that answer after some frames, or never) and for sub-agents (loops of their
 * own), and the run is cancelled at a generated moment — unsubscribed, aborted by `signal`, cut by
 * `toolTimeoutMs` — or not at all. After each run: every history handed out at every depth (`turn_end`,
 * `loop_end`, each agent tool's `details.messages`) is one a provider accepts, nothing is left running (no
 * provider call, no tool, at any depth), nothing runs after the outer loop was torn down, and a loop that was not
 * unsubscribed ends with exactly one `loop_end`.
 */
import fc from 'fast-check';
import { timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgentMessage, LoopEvent } from '../../src/index.js';
import { historyProblem } from './support/history.js';
import { type Tally, agentArb, cancelArb, hangs, loopOf } from './support/agent-tree.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 150);

/** Every history the run handed out, at every depth: each turn_end's and loop_end's, each agent tool's details.messages. */
function histories(event: LoopEvent, found: (readonly AgentMessage[])[] = []): (readonly AgentMessage[])[] {
  if (event.type === 'turn_end' || event.type === 'loop_end') found.push(event.messages);
  if (event.type === 'tool_update' && event.event !== undefined) histories(event.event, found);
  if (event.type === 'tool_result') {
    const details = event.message.details as { messages?: readonly AgentMessage[] } | undefined;
    if (Array.isArray(details?.messages)) found.push(details.messages);
  }
  return found;
}

/** The innermost event an update forwards, through every level. */
function innermost(event: LoopEvent): LoopEvent {
  return event.type === 'tool_update' && event.event !== undefined ? innermost(event.event) : event;
}

/** What is still open under a call id (its tool, or its sub-agent's calls and tools, at any depth). */
const openUnder = (tally: Tally, id: string) => [...tally.open].filter((name) => name.startsWith(`${id} `) || name.startsWith(`${id}.`));

describe('agent tools nested up to three deep, under every cancellation moment (A1–A4)', () => {
  it('A3, A4: every history is valid at every depth, nothing is left running, nothing runs after the teardown, one loop_end unless unsubscribed', () => {
    fc.assert(
      fc.property(agentArb(0), cancelArb, (spec, cancel) => {
        fc.pre(!hangs(spec) || cancel.kind !== 'none');
        const tally: Tally = { open: new Set(), ranAfterTeardown: [], tornDown: false };
        const events: LoopEvent[] = [];
        const stillOpen: string[] = [];
        let completed = false;
        const ts = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
        ts.run(() => {
          const controller = new AbortController();
          if (cancel.kind === 'signal') timer(cancel.at).subscribe(() => controller.abort());
          const loop = loopOf(spec, 'a', tally, cancel.kind === 'timeout' ? cancel.ms : undefined, cancel.kind === 'signal' ? controller.signal : undefined);
          const subscription = loop.subscribe({
            next: (event) => {
              events.push(event);
              // at the moment a call's result is told (at any depth), nothing of it runs any more
              const told = innermost(event);
              if (told.type === 'tool_result') stillOpen.push(...openUnder(tally, told.message.toolCallId));
              if (event.type === 'loop_end') stillOpen.push(...tally.open);
            },
            complete: () => (completed = true),
          });
          subscription.add(() => (tally.tornDown = true));
          if (cancel.kind === 'unsubscribe') {
            timer(cancel.at).subscribe(() => {
              subscription.unsubscribe();
              stillOpen.push(...tally.open); // torn down in that very call
            });
          }
        });
        const unsubscribed = cancel.kind === 'unsubscribe' && !completed;
        expect(stillOpen).toEqual([]);
        expect([...tally.open]).toEqual([]);
        expect(tally.ranAfterTeardown).toEqual([]);
        for (const history of events.flatMap((event) => histories(event))) expect(historyProblem(history)).toBeUndefined();
        if (!unsubscribed) {
          expect(completed).toBe(true);
          expect(events.filter((event) => event.type === 'loop_end')).toHaveLength(1);
          expect(events[events.length - 1]!.type).toBe('loop_end');
        }
      }),
      { numRuns: RUNS },
    );
  });
});
