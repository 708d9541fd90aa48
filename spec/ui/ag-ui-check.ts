import { defaultApplyEvents, verifyEvents } from '@ag-ui/client';
import type { Message } from '@ag-ui/core';
import { EventSchema } from '@ag-ui/core/schemas';
import { from, lastValueFrom, toArray, type Observable } from 'rxjs';
import type { AgUiEvent } from '../../src/ui/index.js';

/**
 * U1's check, by the protocol's own code: each event parses with @ag-ui/core's EventSchema, and the stream passes
 * @ag-ui/client's verifyEvents (an operator on the client's own rxjs, bridged by from()). Resolves to the events,
 * or rejects with the first rule broken.
 */
export async function verified(events: readonly AgUiEvent[]): Promise<AgUiEvent[]> {
  events.forEach((event, i) => {
    const parsed = EventSchema.safeParse(event);
    if (!parsed.success) throw new Error(`event ${i} (${event.type}) does not parse: ${parsed.error.message}\n${JSON.stringify(event)}`);
  });
  // verifyEvents takes the client's Observable type (its own rxjs 7.8.1): the stream goes over as an async iterable
  const checked = verifyEvents(false)(from(events) as never) as never;
  return lastValueFrom(from(checked).pipe(toArray())) as Promise<AgUiEvent[]>;
}

/** The events' types, one per line: how the specs compare a mapping. */
export function types(events: readonly AgUiEvent[]): string[] {
  return events.map((event) => event.type);
}

/**
 * The messages an AG-UI client holds after these events: @ag-ui/client's own defaultApplyEvents (what HttpAgent
 * runs), from the messages it sent.
 */
export async function clientMessages(events: readonly AgUiEvent[], sent: Message[] = []): Promise<Message[]> {
  let messages = structuredClone(sent);
  const agent = { messages, state: {} };
  const input = { threadId: 'th', runId: 'run', messages, tools: [], context: [], state: {} };
  await lastValueFrom(
    from(defaultApplyEvents(input, from(events) as never, agent as never, []) as never as Observable<{ messages?: Message[] }>).pipe(toArray()),
  ).then((mutations) => {
    for (const mutation of mutations) if (mutation.messages !== undefined) messages = mutation.messages;
  });
  return messages;
}
