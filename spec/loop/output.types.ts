/**
 * J4, checked by the compiler (`tsc` type-checks spec/ in `npm test`; jest does not run this file): `loop_end.output`
 * is typed from `output.schema`, inferred, with no cast — on runEventedToolLoop and conversation() — and code
 * written before `output` existed still compiles. Each `@ts-expect-error` fails the type check if the line under
 * it ever compiles.
 */
import { Observable, filter, map } from 'rxjs';
import { z } from 'zod';
import { ConversationEvent, LoopEvent, LoopEventOf, ToolRegistry, conversation, runEventedToolLoop, scriptedProvider } from '../../src/index.js';

const provider = scriptedProvider([]);
const registry = new ToolRegistry();

const typed = runEventedToolLoop({ provider, registry, messages: [], output: { schema: z.object({ city: z.string(), days: z.number().default(1) }) } });
export const cities: Observable<string | undefined> = typed.pipe(
  filter((event) => event.type === 'loop_end'),
  map((end) => {
    const days: number | undefined = end.output?.days; // the validator's output: the default filled in
    // @ts-expect-error a typo in a field of the answer
    const typo: unknown = end.output?.citty;
    // @ts-expect-error the answer may be missing (an abort, an error)
    const sure: string = end.output.city;
    return `${days} ${String(typo)} ${sure}`.length > 0 ? end.output?.city : undefined;
  }),
);

// the answer as its own type: `{ city: string } | undefined`, exactly
type Answer = NonNullable<Extract<typeof typed extends Observable<infer E> ? E : never, { type: 'loop_end' }>['output']>;
export const exact: Answer = { city: 'Oslo', days: 2 };
// @ts-expect-error a number is no city
export const wrong: Answer = { city: 3, days: 2 };

// conversation() likewise
export const conversed = (prompts$: Observable<string>): Observable<string | undefined> =>
  prompts$.pipe(
    conversation({ provider, registry, output: { schema: z.object({ city: z.string() }) } }),
    filter((event) => event.type === 'loop_end'),
    map((end) => end.output?.city),
  );

// a jsonSchema alone: no type to infer, the answer is unknown
export const bare = runEventedToolLoop({ provider, registry, messages: [], output: { jsonSchema: { type: 'object' } } }).pipe(
  filter((event) => event.type === 'loop_end'),
  // @ts-expect-error unknown, until the application checks it
  map((end) => end.output.city as string),
);

// code written before output existed: the same types as before
export const untyped: Observable<LoopEvent> = runEventedToolLoop({ provider, registry, messages: [] });
export const anyTyped: Observable<LoopEvent> = typed; // a typed loop is still a loop of LoopEvents
export const ends = (events: Observable<ConversationEvent>): Observable<LoopEventOf<'loop_end'>> =>
  events.pipe(filter((event): event is LoopEventOf<'loop_end'> => event.type === 'loop_end'));
export const conversationEvents: Observable<ConversationEvent> = new Observable<string>().pipe(conversation({ provider, registry }));
