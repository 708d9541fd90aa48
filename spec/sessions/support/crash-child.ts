/**
 * The writer that spec/sessions/jsonl-store-crash.spec.ts kills: it loads the session in the file it is given,
 * finishes what a crash left unfinished (a prompt without its answer, calls without their results: R22), then
 * asks the prompts not yet asked, saving everything with `persist` into that file. Prints `ready` once loaded
 * and `done` at the end. Bundled by the spec with esbuild and run by plain node (no ts-node start-up).
 */
import { EMPTY, type Observable, concat, defer, from, switchMap } from 'rxjs';
import type { ConversationEvent } from '../../../src/index.js';
import { conversation, runEventedToolLoop } from '../../../src/index.js';
import type { SessionStore } from '../../../src/sessions/index.js';
import { SessionTree, jsonlStore, persist } from '../../../src/sessions/index.js';
import { historyModel, historyTools } from './model.js';

/** The whole conversation: every other prompt asks the time (two tools, two turns). */
export const PROMPTS = Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? `What time is it, round ${i}?` : `Thanks (${i})`));

/** Loads the session in `store` and completes its conversation from wherever it stands. */
export function complete(store: SessionStore, onLoaded: () => void = () => undefined): Observable<ConversationEvent> {
  const provider = historyModel();
  const registry = historyTools();
  return SessionTree.load(store).pipe(
    switchMap((tree) => {
      onLoaded();
      const context = tree.context();
      const last = context[context.length - 1];
      // a loop the crash cut short: its prompt, or its calls, wait for the rest
      const unfinished = last !== undefined && !(last.role === 'assistant' && (last.toolCalls ?? []).length === 0);
      const pending = unfinished ? runEventedToolLoop({ provider, registry, messages: context }).pipe(persist(tree, store)) : EMPTY;
      const asked = context.filter((message) => message.role === 'user').length;
      const rest = defer(() => from(PROMPTS.slice(asked)).pipe(conversation({ provider, registry, messages: tree.context() }), persist(tree, store)));
      return concat(pending, rest);
    }),
  );
}

if (require.main === module) {
  complete(jsonlStore(process.argv[2]!), () => process.stdout.write('ready\n')).subscribe({
    complete: () => process.stdout.write('done\n'),
    error: (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  });
}
