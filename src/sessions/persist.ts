import { MonoTypeOperatorFunction, Observable } from 'rxjs';
import type { AgentMessage, ConversationEvent, LoopEventOf, ToolResultMessage } from '../types.js';
import { type SessionEntry, type SessionStore, checkStore } from './session-entry.js';
import { SessionTree, type WriteObserver } from './session-tree.js';
import { HeldSubscriber } from '../util/held-subscriber.js';
import { shown } from '../util/values.js';

/**
 * Saves a conversation as it goes (S2): each message is appended once, when it joins the history — the prompt
 * at its `user_message`, the assistant message and its results at their `turn_end` — in order, parented on the
 * tree's leaf, one batch per event; every event passes on unchanged, after its batch was handed to the store.
 * An aborted turn is saved as the loop's history keeps it (its `error: aborted` results included: nothing the
 * user saw is lost). A compaction a turn's `turn_end` carries (`compactWhen` made it, S5) is appended before
 * that turn's messages, kept from the entry of the message at its `firstKept`; everything persist records it
 * learns from the events (R34: a copy of each event, a `structuredClone` or a JSON copy, records the same).
 * Completes (or errors) once every batch is written; a store's error is its error. Start the conversation from
 * `tree.context()`: the messages it starts from are the tree's already.
 *
 * ```text
 * events:   (U)…(E)…(F)(L|)          U = user_message, E/F = turn_end, L = loop_end
 * store:    [user][assistant, toolResult][assistant]
 * persist:  (U)…(E)…(F)(L|)          the same events, unchanged
 * ```
 *
 * ```ts
 * prompts$.pipe(conversation({ provider, registry, messages: tree.context() }), persist(tree, store)).subscribe(render);
 * ```
 *
 * @throws TypeError at call time for a `tree` that is no SessionTree or a `store` without `load` and `append`.
 */
export function persist(tree: SessionTree, store: SessionStore): MonoTypeOperatorFunction<ConversationEvent> {
  if (!(tree instanceof SessionTree)) throw new TypeError(`persist: tree must be a SessionTree, from SessionTree.load(store) (got ${shown(tree)})`);
  checkStore(store, 'persist: store');
  return (source) =>
    new Observable<ConversationEvent>((subscriber) => {
      /** How many messages of the loop's history the tree holds already (known at the first event that says). */
      let known: number | undefined;
      /**
       * The entry behind each message of the loop's history, where the tree has one: what a compaction's
       * `firstKept` (an index into that history, R34) names. At the first event, the tree's context: the
       * conversation started from it.
       */
      let held: (SessionEntry | undefined)[] = [];
      let writing = 0;
      let ended: (() => void) | undefined;
      // one observer for every batch; not torn down with the subscription: what was handed to the store gets written
      const written: WriteObserver = {
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          writing--;
          if (writing === 0) ended?.();
        },
      };

      const save = (entries: SessionEntry[]) => {
        if (entries.length === 0) return;
        writing++;
        tree.write(entries, store, written);
      };

      /** The first `count` messages of the loop's history are the tree's: the entries behind them, if they are its context. */
      const begin = (count: number, context = tree.contextEntries()) => {
        known = count;
        held = context.length === count ? context : new Array<undefined>(count);
      };

      /** Adds `messages` to the tree at its leaf, after `entries` (a compaction), and saves them as one batch. */
      const grow = (messages: readonly AgentMessage[], entries: SessionEntry[]) => {
        const added = tree.addMessages(messages);
        for (const entry of added) entries.push(entry);
        save(entries);
        return added;
      };

      const turnEnd = (event: LoopEventOf<'turn_end'>) => {
        const { messages, assistant, toolResults } = event;
        if (event.turn === 0) return resumed(messages, toolResults);
        if (known === undefined) {
          // a loop's first turn: the empty stand-in of an abort before the model call is no part of the history
          // (R7, H6). The turn's assistant message is in it when it is the event's own (a structuredClone keeps
          // that), or when the history before it is the tree's context (a JSON copy keeps that)
          const before = messages.length - 1 - toolResults.length;
          const context = tree.contextEntries();
          begin(messages[before] === assistant || context.length === before ? before : messages.length, context);
        }
        const entries: SessionEntry[] = [];
        // S5, R34: what the turn's prepareTurn summarised, before the turn's messages; kept from an entry of the tree
        const { compaction } = event;
        const kept = compaction === undefined ? undefined : held[compaction.firstKept];
        if (kept?.type === 'message') entries.push(tree.addCompaction(compaction!.summary, kept.id));
        for (const entry of grow(messages.slice(known), entries)) held.push(entry);
        known = messages.length;
      };

      /** R22: turn 0 — the saved assistant message and its saved results are the tree's; only the new results are not. */
      const resumed = (messages: readonly AgentMessage[], toolResults: readonly ToolResultMessage[]) => {
        const from = messages.findLastIndex((message) => message.role === 'assistant') + 1; // the saved one: the last
        const ids = new Set(toolResults.map((result) => result.toolCallId));
        const fresh = messages.slice(from).filter((message) => message.role === 'toolResult' && ids.has(message.toolCallId));
        if (known === undefined) begin(messages.length - fresh.length);
        // the results stand in call order in the history, the new ones after the saved ones in the tree
        const byCall = new Map<string, SessionEntry>();
        const note = (entry: SessionEntry | undefined) => entry?.type === 'message' && entry.message.role === 'toolResult' && byCall.set(entry.message.toolCallId, entry);
        for (let index = from; index < held.length; index++) note(held[index]);
        for (const entry of grow(fresh, [])) note(entry);
        held.length = from;
        for (let index = from; index < messages.length; index++) {
          const message = messages[index]!;
          held.push(message.role === 'toolResult' ? byCall.get(message.toolCallId) : undefined);
        }
        known = messages.length;
      };

      const record = (event: ConversationEvent) => {
        switch (event.type) {
          case 'user_message': {
            if (known === undefined) begin(event.messages.length - 1);
            for (const entry of grow(event.messages.slice(known), [])) held.push(entry);
            known = event.messages.length;
            return;
          }
          case 'turn_end':
            return turnEnd(event);
          default:
            return;
        }
      };

      const end = (finish: () => void) => {
        ended = finish;
        if (writing === 0) finish();
      };
      // a Subscriber of its own (no wrapper per event), closed with the consumer even during a synchronous start
      const events = new HeldSubscriber<ConversationEvent>({
        next: (event) => {
          try {
            record(event);
          } catch (error) {
            return subscriber.error(error);
          }
          subscriber.next(event);
        },
        error: (error: unknown) => end(() => subscriber.error(error)),
        complete: () => end(() => subscriber.complete()),
      });
      subscriber.add(events);
      source.subscribe(events);
    });
}
