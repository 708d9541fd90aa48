import type { ProviderEvent, Usage } from '../types.js';
import { parseArguments } from '../providers/json.js';
import { errorText } from '../util/values.js';
import { aiSdkFailure } from './failure.js';
import type { AnyStreamPart } from './language-model.js';
import { type ReplyPart, mergeRecords } from './reply-parts.js';

type MessageEnd = Extract<ProviderEvent, { type: 'message_end' }>;
type TextPart = Extract<ReplyPart, { type: 'ai-sdk.text' | 'ai-sdk.reasoning' }>;
type Finish = Extract<AnyStreamPart, { type: 'finish' }>;

/**
 * P18: the parts of one `doStream` as provider events. `text-delta` → `text_delta`, `reasoning-delta` →
 * `reasoning_delta`; a call's `tool-input-delta`s → `tool_call_delta`s (P9: `index` counts the reply's calls
 * from 0, the first delta names the call's `id` and `name`; a call whose input came in no delta gets one with
 * the whole input), its `tool-call` → `tool_call` at once (R3); `finish` → `message_end` with the stop reason,
 * the usage (R27, cache reads and writes included) and the reply's parts for P10; an `error` part →
 * `message_end` `error` with its `failure` (L1). Calls the provider ran itself (`providerExecuted`) are the
 * provider's business: not emitted. One translator per call; after `message_end` it takes nothing more.
 */
export class StreamTranslator {
  private readonly calls = new Map<string, { index: number; name: string; streamed: boolean }>();
  private readonly parts: ReplyPart[] = [];
  /** The text and reasoning parts by their stream id, to gather their deltas and metadata. */
  private readonly open = { 'ai-sdk.text': new Map<string, TextPart>(), 'ai-sdk.reasoning': new Map<string, TextPart>() };
  private emittedCalls = 0;
  private metadata = false;
  ended = false;

  /** The events of one part (none for parts that change nothing: sources, files, metadata, raw chunks). */
  next(part: AnyStreamPart): ProviderEvent[] {
    if (this.ended) return [];
    switch (part.type) {
      case 'text-start':
      case 'text-end':
        this.textPart('ai-sdk.text', part.id, part.providerMetadata);
        return [];
      case 'text-delta':
        this.textPart('ai-sdk.text', part.id, part.providerMetadata).text += part.delta;
        return part.delta === '' ? [] : [{ type: 'text_delta', text: part.delta }];
      case 'reasoning-start':
      case 'reasoning-end':
        this.textPart('ai-sdk.reasoning', part.id, part.providerMetadata);
        return [];
      case 'reasoning-delta':
        this.textPart('ai-sdk.reasoning', part.id, part.providerMetadata).text += part.delta;
        return part.delta === '' ? [] : [{ type: 'reasoning_delta', text: part.delta }];
      case 'tool-input-start':
        if (part.providerExecuted !== true) this.call(part.id, part.toolName);
        return [];
      case 'tool-input-delta': {
        const call = this.calls.get(part.id);
        if (call === undefined || part.delta === '') return [];
        return [this.delta(part.id, call, part.delta)];
      }
      case 'tool-call':
        return part.providerExecuted === true ? [] : this.toolCall(part);
      case 'finish':
        return [this.finish(part)];
      case 'error':
        return [this.close({ type: 'message_end', stopReason: 'error', ...aiSdkFailure(part.error) })];
      default:
        return [];
    }
  }

  /** The stream closed: `message_end` if no `finish` or `error` part came (a cut stream is an error). */
  end(): ProviderEvent[] {
    if (this.ended) return [];
    const errorMessage = 'the stream ended without a finish part';
    return [this.close({ type: 'message_end', stopReason: 'error', errorMessage, failure: { kind: 'protocol', message: errorMessage } })];
  }

  /** Reading the stream failed (the connection broke). */
  fail(error: unknown): ProviderEvent[] {
    if (this.ended) return [];
    return [this.close({ type: 'message_end', stopReason: 'error', ...aiSdkFailure(error) })];
  }

  private textPart(type: TextPart['type'], id: string, metadata: unknown): TextPart {
    const open = this.open[type];
    let part = open.get(id);
    if (part === undefined) {
      part = { type, text: '' } as TextPart;
      open.set(id, part);
      this.parts.push(part);
    }
    if (metadata !== undefined) this.withMetadata(part, metadata);
    return part;
  }

  private withMetadata(part: ReplyPart, metadata: unknown): void {
    const merged = mergeRecords(part.providerOptions, metadata);
    if (merged !== undefined && merged !== part.providerOptions) {
      part.providerOptions = merged;
      this.metadata = true;
    }
  }

  private call(id: string, name: string) {
    let call = this.calls.get(id);
    if (call === undefined) this.calls.set(id, (call = { index: this.calls.size, name, streamed: false }));
    return call;
  }

  private delta(id: string, call: { index: number; name: string; streamed: boolean }, argumentsDelta: string): ProviderEvent {
    const first = !call.streamed;
    call.streamed = true;
    return first ? { type: 'tool_call_delta', index: call.index, id, name: call.name, argumentsDelta } : { type: 'tool_call_delta', index: call.index, argumentsDelta };
  }

  private toolCall(part: Extract<AnyStreamPart, { type: 'tool-call' }>): ProviderEvent[] {
    let input: Record<string, unknown>;
    try {
      input = parseArguments(part.input, part.toolName, part.toolCallId);
    } catch (error) {
      const errorMessage = errorText(error);
      return [this.close({ type: 'message_end', stopReason: 'error', errorMessage, failure: { kind: 'protocol', message: errorMessage } })];
    }
    const call = this.call(part.toolCallId, part.toolName);
    const events: ProviderEvent[] = [];
    if (!call.streamed && part.input !== '') events.push(this.delta(part.toolCallId, call, part.input));
    const kept: ReplyPart = { type: 'ai-sdk.tool-call', toolCallId: part.toolCallId };
    this.withMetadata(kept, part.providerMetadata);
    this.parts.push(kept);
    this.emittedCalls++;
    events.push({ type: 'tool_call', call: { id: part.toolCallId, name: part.toolName, input } });
    return events;
  }

  private finish({ finishReason, usage }: Finish): MessageEnd {
    const calls = this.emittedCalls > 0;
    const end: MessageEnd = { type: 'message_end', stopReason: 'stop' };
    switch (finishReason.unified) {
      case 'stop':
      case 'tool-calls':
        end.stopReason = calls ? 'toolUse' : 'stop';
        break;
      case 'length':
        end.stopReason = 'length'; // P6: whole calls before the cut have run; the cut one never came
        break;
      default: {
        // content-filter, error, other (and V4's interrupted): the model did not finish its answer
        const raw = finishReason.raw === undefined || finishReason.raw === finishReason.unified ? '' : ` (${finishReason.raw})`;
        end.stopReason = 'error';
        end.errorMessage = `the model stopped: ${finishReason.unified}${raw}`;
        end.failure = { kind: finishReason.unified === 'content-filter' ? 'refusal' : 'protocol', message: end.errorMessage };
      }
    }
    const counted = aiSdkUsage(usage);
    if (counted !== undefined) end.usage = counted;
    return this.close(end);
  }

  private close(end: MessageEnd): MessageEnd {
    this.ended = true;
    // P10: the reply's parts go back with the next request when they carry what the model needs again
    if (this.parts.some((part) => part.type === 'ai-sdk.reasoning') || this.metadata) end.reasoning = this.parts.map(copyPart);
    return end;
  }
}

function copyPart(part: ReplyPart): ReplyPart {
  return { ...part };
}

/**
 * R27: the AI SDK's usage as {@link Usage}: the totals (a provider's cached input counted in `inputTokens.total`,
 * as the AI SDK counts it), and `cacheReadTokens` / `cacheWriteTokens` when the provider told them.
 * `undefined` when the provider told neither total.
 */
export function aiSdkUsage(usage: Finish['usage'] | undefined): Usage | undefined {
  if (usage === undefined) return undefined;
  const { inputTokens, outputTokens } = usage;
  if (inputTokens.total === undefined && outputTokens.total === undefined) return undefined;
  const counted: Usage = { inputTokens: inputTokens.total ?? 0, outputTokens: outputTokens.total ?? 0 };
  if (inputTokens.cacheRead !== undefined) counted.cacheReadTokens = inputTokens.cacheRead;
  if (inputTokens.cacheWrite !== undefined) counted.cacheWriteTokens = inputTokens.cacheWrite;
  return counted;
}

