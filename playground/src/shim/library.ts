/**
 * `rx-tool-loop` for the scenario files: the build's, but each loop (or conversation) they start is
 * handed to the page's recorder, which draws its provider calls, tool runs and raw events.
 */
import type { Observable, OperatorFunction } from 'rxjs';
import { conversation as builtConversation, runEventedToolLoop as builtRunEventedToolLoop } from 'rx-tool-loop';
import type { ConversationEvent, ConversationOptions, LoopEvent, LoopOptions, UserMessage } from 'rx-tool-loop';
import { currentRecorder } from './registry';

export * from 'rx-tool-loop';

export function runEventedToolLoop(options: LoopOptions): Observable<LoopEvent> {
  const recorder = currentRecorder();
  if (recorder === undefined) return builtRunEventedToolLoop(options);
  return recorder.loop(builtRunEventedToolLoop({ ...options, provider: recorder.provider(options.provider) }), 'runEventedToolLoop');
}

export function conversation(options: ConversationOptions): OperatorFunction<string | UserMessage, ConversationEvent> {
  const recorder = currentRecorder();
  if (recorder === undefined) return builtConversation(options);
  const operator = builtConversation({ ...options, provider: recorder.provider(options.provider) });
  return (prompts) => recorder.loop(operator(prompts), `conversation({ policy: '${options.policy ?? 'queue'}' })`);
}
