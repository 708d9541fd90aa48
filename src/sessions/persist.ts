import { MonoTypeOperatorFunction, Observable } from 'rxjs';
import type { AgentMessage, ConversationEvent, LoopEventOf } from '../types.js';
import { takeCompaction } from './compactions.js';
import { type SessionEntry, type SessionStore, checkStore } from './session-entry.js';
import { SessionTree, type Written, compactTree, contextIds, growTree, writeTree } from './session-tree.js';
import { HeldSubscriber } from '../util/held-subscriber.js';
import { shown } from '../util/values.js';

/**
 * Saves a conversation as it goes (S2): each message is appended once, when it joins the history — the prompt
 * at its `user_message`, the assistant message and its results at their `turn_end` — in order, parented on the
 * tree's leaf, one batch per event; every event passes on unchanged, after its batch was handed to the store.
 * An aborted turn is saved as the loop's history keeps it (its `error: aborted` results included: nothing the
 * user saw is lost). A compaction `compactWhen` made for a turn is appended before that turn's messages (S5).
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
      let writing = 0;
      let ended: (() => void) | undefined;
      // one observer for every batch; not torn down with the subscription: what was handed to the store gets written
      const written: Written = {
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          writing--;
          if (writing === 0) ended?.();
        },
      };

      const save = (entries: SessionEntry[]) => {
        if (entries.length === 0) return;
        writing++;
        writeTree(tree, store, entries, written);
      };

      const turnEnd = (event: LoopEventOf<'turn_end'>) => {
        const { messages, assistant, toolResults } = event;
        let fresh: readonly AgentMessage[];
        if (event.turn === 0) {
          // R22: the saved assistant message and its saved results are the tree's; only the new results are not
          const from = messages.lastIndexOf(assistant) + 1;
          const ids = new Set(toolResults.map((result) => result.toolCallId));
          fresh = messages.slice(from).filter((message) => message.role === 'toolResult' && ids.has(message.toolCallId));
        } else {
          // the empty stand-in of an abort before the model call is no part of the history (R7, H6)
          known ??= messages[messages.length - 1 - toolResults.length] === assistant ? messages.length - 1 - toolResults.length : messages.length;
          fresh = messages.slice(known);
        }
        const entries: SessionEntry[] = [];
        const compaction = takeCompaction(known === undefined || known === 0 ? undefined : messages[known - 1]);
        if (compaction !== undefined) {
          const firstKeptId = keptId(tree, messages, known!, compaction.firstKept);
          if (firstKeptId !== undefined) entries.push(compactTree(tree, compaction.summary, firstKeptId));
        }
        growTree(tree, fresh, entries);
        known = messages.length;
        save(entries);
      };

      const record = (event: ConversationEvent) => {
        switch (event.type) {
          case 'user_message': {
            known ??= event.messages.length - 1;
            const entries: SessionEntry[] = [];
            growTree(tree, event.messages.slice(known), entries);
            known = event.messages.length;
            return save(entries);
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

/** The entry of `firstKept`, a message of the history the tree holds (its first `known`): by identity, else by place. */
function keptId(tree: SessionTree, messages: readonly AgentMessage[], known: number, firstKept: AgentMessage): string | undefined {
  const own = tree.path().find((entry) => entry.type === 'message' && entry.message === firstKept);
  if (own !== undefined) return own.id;
  const ids = contextIds(tree);
  const index = messages.indexOf(firstKept);
  return ids.length === known && index >= 0 && index < known ? (ids[index] ?? undefined) : undefined;
}
