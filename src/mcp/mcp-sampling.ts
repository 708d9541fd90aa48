import type { CreateMessageRequestParams, CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';
import { Observable } from 'rxjs';
import type { AgentMessage, Attachment, Provider, ProviderInput, StopReason } from '../types.js';
import { isPlainObject } from '../util/values.js';

/** What a server asks in `sampling/createMessage`: `messages`, `systemPrompt`, `maxTokens` and the rest. */
export type McpSamplingRequest = CreateMessageRequestParams;

/**
 * M8: the model that answers a server's `sampling/createMessage`: a `Provider`, or `{ provider(request) }`,
 * which makes one for each request (to give it the request's `maxTokens`, say: a `Provider` is called with
 * messages and tools only).
 */
export type McpSampling = Provider | { provider: (request: McpSamplingRequest) => Provider };


/**
 * M8: the provider's input for a sampling request: `systemPrompt` a system message first, then each message —
 * its text contents joined with `\n`, a user's images and sounds as attachments — and no tools. A request with
 * tools, or a tool use or result among its messages, is refused: the loop's own tools are not the server's.
 */
export function samplingInput(request: McpSamplingRequest): ProviderInput {
  if (request.tools !== undefined || request.toolChoice !== undefined) throw new Error('rx-tool-loop: sampling with tools is not supported');
  const messages: AgentMessage[] = typeof request.systemPrompt === 'string' && request.systemPrompt !== '' ? [{ role: 'system', content: request.systemPrompt }] : [];
  for (const message of request.messages) {
    const blocks: unknown[] = Array.isArray(message.content) ? message.content : [message.content];
    const texts: string[] = [];
    const attachments: Attachment[] = [];
    for (const block of blocks) {
      const { type, text, data, mimeType } = isPlainObject(block) ? block : {};
      if (type === 'text' && typeof text === 'string') texts.push(text);
      else if ((type === 'image' || type === 'audio') && message.role === 'user' && typeof data === 'string' && typeof mimeType === 'string') attachments.push({ type, mimeType, data });
      else throw new Error(`rx-tool-loop: cannot sample ${String(type)} content in a message of the ${message.role}`);
    }
    const content = texts.join('\n');
    if (message.role === 'user') messages.push(attachments.length === 0 ? { role: 'user', content } : { role: 'user', content, attachments });
    else messages.push({ role: 'assistant', content, stopReason: 'stop' });
  }
  return { messages, tools: [] };
}

/** The provider `sampling` gives for `request`. */
export function samplingProvider(sampling: McpSampling, request: McpSamplingRequest): Provider {
  return typeof sampling === 'function' ? sampling : sampling.provider(request);
}

const STOP_REASONS: Partial<Record<StopReason, CreateMessageResult['stopReason']>> = { stop: 'endTurn', length: 'maxTokens', toolUse: 'toolUse' };

/**
 * M8: one provider call as the SDK's `CreateMessageResult`: the reply's text, its model (`unknown` when the
 * provider does not say) and its stop reason (`stop` is `endTurn`, `length` is `maxTokens`). A reply that
 * ends in `error` or `aborted` is an error, which the SDK sends the server.
 *
 * ```text
 * provider:  -s-t-t-(e|)     s = message_start, t = text_delta, e = message_end
 * sampled:   -------(r|)     r = { role: 'assistant', content: { type: 'text', text }, model, stopReason }
 * ```
 */
export function sampled(provider: Provider, input: ProviderInput): Observable<CreateMessageResult> {
  return new Observable<CreateMessageResult>((subscriber) => {
    let text = '';
    return provider(input).subscribe({
      next: (event) => {
        if (event.type === 'text_delta') text += event.text;
        if (event.type !== 'message_end') return;
        if (event.stopReason === 'error' || event.stopReason === 'aborted') {
          subscriber.error(new Error(`rx-tool-loop: the model's reply ended in ${event.stopReason}${event.errorMessage === undefined ? '' : `: ${event.errorMessage}`}`));
          return;
        }
        subscriber.next({ role: 'assistant', content: { type: 'text', text }, model: event.model ?? 'unknown', stopReason: STOP_REASONS[event.stopReason] ?? event.stopReason });
        subscriber.complete();
      },
      error: (error: unknown) => subscriber.error(error),
      complete: () => subscriber.error(new Error('rx-tool-loop: the provider ended with no reply')),
    });
  });
}
