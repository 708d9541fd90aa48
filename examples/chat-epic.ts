/**
 * A redux-observable-style epic: `prompt` actions in, loop events mapped to actions out. `switchMap`
 * makes a new prompt cancel the loop still running for the previous one (its provider call and its
 * tools are torn down). The history comes from the state, as an epic's would.
 */
import { Observable, filter, map, switchMap, withLatestFrom } from 'rxjs';
import type { AgentMessage, LoopEndReason, LoopEvent, Provider, ToolRegistry } from '../src/index.js';
import { runEventedToolLoop } from '../src/index.js';

export type ChatAction =
  | { type: 'chat/prompt'; text: string }
  | { type: 'chat/delta'; text: string }
  | { type: 'chat/toolStarted'; id: string; name: string }
  | { type: 'chat/toolFinished'; id: string; isError: boolean }
  | { type: 'chat/turnEnded'; messages: readonly AgentMessage[] }
  | { type: 'chat/answered'; reason: LoopEndReason; messages: readonly AgentMessage[] };

export interface ChatState {
  messages: readonly AgentMessage[];
  streaming: string;
  running: readonly string[];
}

export interface ChatDependencies {
  provider: Provider;
  registry: ToolRegistry;
}

export const chatEpic = (action$: Observable<ChatAction>, state$: Observable<ChatState>, { provider, registry }: ChatDependencies) =>
  action$.pipe(
    filter((action): action is Extract<ChatAction, { type: 'chat/prompt' }> => action.type === 'chat/prompt'),
    withLatestFrom(state$),
    switchMap(([prompt, state]) =>
      runEventedToolLoop({ provider, registry, messages: [...state.messages, { role: 'user', content: prompt.text }] }).pipe(
        map(toAction),
        filter((action): action is ChatAction => action !== undefined),
      ),
    ),
  );

function toAction(event: LoopEvent): ChatAction | undefined {
  switch (event.type) {
    case 'text_delta':
      return { type: 'chat/delta', text: event.text };
    case 'tool_start':
      return { type: 'chat/toolStarted', id: event.call.id, name: event.call.name };
    case 'tool_result':
      return { type: 'chat/toolFinished', id: event.message.toolCallId, isError: event.message.isError };
    case 'turn_end':
      return { type: 'chat/turnEnded', messages: event.messages };
    case 'loop_end':
      return { type: 'chat/answered', reason: event.reason, messages: event.messages };
    default:
      return undefined;
  }
}

/** The reducer that goes with it: a pure function of the state and one action. */
export function chatReducer(state: ChatState, action: ChatAction): ChatState {
  switch (action.type) {
    case 'chat/prompt':
      // the prompt enters the history with the loop's first turn_end (a cancelled loop leaves none)
      return { ...state, streaming: '' };
    case 'chat/delta':
      return { ...state, streaming: state.streaming + action.text };
    case 'chat/toolStarted':
      return { ...state, running: [...state.running, action.id] };
    case 'chat/toolFinished':
      return { ...state, running: state.running.filter((id) => id !== action.id) };
    case 'chat/turnEnded':
    case 'chat/answered':
      return { ...state, messages: action.messages, streaming: '' };
  }
}
