/**
 * A redux-observable-style epic on `conversation()`: `chat/prompt` actions in, each conversation event out
 * as a `chat/event` action, and a reducer that is `reduceViewModel`, so the state is a `LoopViewModel`
 * (status, the turn's text and tools, the history, usage). Policy `'switch'`: a prompt that arrives while a
 * loop runs aborts it (its provider call and tools are torn down; its turn, with what the user saw of it,
 * stays in the history), then runs. The conversation carries the history, from the state's when the epic
 * starts (e.g. one restored from storage).
 */
import { Observable, filter, map } from 'rxjs';
import type { ConversationEvent, LoopViewModel, Provider, ToolRegistry } from '../src/index.js';
import { conversation, initialViewModel, reduceViewModel } from '../src/index.js';

export type ChatAction = { type: 'chat/prompt'; text: string } | { type: 'chat/event'; event: ConversationEvent };
export type ChatState = LoopViewModel;

export interface ChatDependencies {
  provider: Provider;
  registry: ToolRegistry;
}

/** `state$` is redux-observable's `StateObservable`: the conversation starts from its `value`'s history. */
export const chatEpic = (action$: Observable<ChatAction>, state$: { value: ChatState }, { provider, registry }: ChatDependencies) =>
  action$.pipe(
    filter((action) => action.type === 'chat/prompt'),
    map((action) => action.text),
    conversation({ provider, registry, policy: 'switch', messages: state$.value.messages }),
    map((event): ChatAction => ({ type: 'chat/event', event })),
  );

/** The reducer that goes with it: the view model's (`initialViewModel` before any event). */
export const chatReducer = (state: ChatState = initialViewModel, action: ChatAction): ChatState =>
  action.type === 'chat/event' ? reduceViewModel(state, action.event) : state;
