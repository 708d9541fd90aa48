/**
 * P21 for Gemini: what the official `@google/genai` makes of a recorded stream, summed up as geminiProvider's
 * outcome is, so that check-streams can hold the two side by side — the same text, thoughts, calls (names; the
 * arguments of each whole call; the API's ids), thought signatures in order, usage, and finish reason. The SDK
 * reads the stream from the same loopback server (`generateContentStream`, the Developer API client, or the
 * Vertex one for a `vertex` recording); it does not put Vertex's streamed arguments together, so a streamed
 * call is compared by its name.
 */
import { GoogleGenAI } from '@google/genai';
import type { GenerateContentResponse } from '@google/genai';
import type { StopReason, ToolCall, Usage } from '../src/index.js';
import type { LoopbackServer } from '../spec/providers/loopback-server.js';

/** One reply, summed up the same way from either side. */
export interface GeminiSummary {
  text: string;
  thoughts: string;
  /** `args` only for a call that came whole; `id` only where the API gave one. */
  calls: { name: string; args?: Record<string, unknown>; id?: string }[];
  /** Every part's `thoughtSignature`, in order. */
  signatures: string[];
  usage?: Usage;
  stopReason: StopReason;
}

/** P17's finish reasons as stop reasons: what the provider must make of what the SDK read. */
function stopReasonOf(finishReason: string | undefined, calls: number): StopReason {
  if (finishReason === 'STOP') return calls > 0 ? 'toolUse' : 'stop';
  if (finishReason === 'MAX_TOKENS') return 'length';
  return 'error'; // a refusal, a malformed call, a blocked prompt, a stream cut before its finish reason
}

/** P17's usage arithmetic, from the SDK's `usageMetadata` of the last chunk that counts anything. */
function usageOf(raw: GenerateContentResponse['usageMetadata']): Usage | undefined {
  if (raw === undefined || (raw.promptTokenCount === undefined && raw.candidatesTokenCount === undefined)) return undefined;
  const usage: Usage = {
    inputTokens: (raw.promptTokenCount ?? 0) + (raw.toolUsePromptTokenCount ?? 0),
    outputTokens: (raw.candidatesTokenCount ?? 0) + (raw.thoughtsTokenCount ?? 0),
  };
  if (raw.cachedContentTokenCount !== undefined) usage.cacheReadTokens = raw.cachedContentTokenCount;
  return usage;
}

/**
 * Serves `body` once and reads it with `@google/genai`: its summary, or the SDK's error when it throws (as it
 * does on a stream it cannot read).
 */
export async function sdkSummary(server: LoopbackServer, body: Buffer, vertex: boolean): Promise<GeminiSummary | { thrown: string }> {
  server.reset();
  server.reply({ body });
  // the SDK's own fetch options name Undici's global dispatcher, which a sandboxed realm (jest's) lacks; on
  // loopback its timeouts matter not, so the platform's fetch goes without them
  const fetch = (input: RequestInfo | URL, init?: RequestInit) => {
    const { dispatcher, ...plain } = (init ?? {}) as RequestInit & { dispatcher?: unknown };
    return globalThis.fetch(input, plain);
  };
  const ai = new GoogleGenAI({ vertexai: vertex, apiKey: 'check-streams', httpOptions: { baseUrl: server.url, fetch } });
  const summary: GeminiSummary = { text: '', thoughts: '', calls: [], signatures: [], stopReason: 'error' };
  let finishReason: string | undefined;
  try {
    for await (const chunk of await ai.models.generateContentStream({ model: 'check-streams', contents: 'check-streams' })) {
      const usage = usageOf(chunk.usageMetadata);
      if (usage !== undefined) summary.usage = usage;
      const candidate = chunk.candidates?.[0];
      for (const part of candidate?.content?.parts ?? []) {
        if (part.thoughtSignature !== undefined) summary.signatures.push(part.thoughtSignature);
        if (typeof part.text === 'string') {
          if (part.thought === true) summary.thoughts += part.text;
          else summary.text += part.text;
        }
        const call = part.functionCall;
        if (call?.name !== undefined) {
          const streamed = call.willContinue === true || call.partialArgs !== undefined;
          summary.calls.push({ name: call.name, ...(!streamed && { args: call.args ?? {} }), ...(call.id !== undefined && { id: call.id }) });
        }
      }
      if (candidate?.finishReason !== undefined) finishReason = candidate.finishReason;
    }
  } catch (error) {
    return { thrown: String((error as Error)?.message ?? error).slice(0, 160) };
  }
  summary.stopReason = stopReasonOf(finishReason, summary.calls.length);
  return summary;
}

/** The provider's side: its outcome's text, calls, the signatures of `message_end.reasoning`'s parts, usage. */
export function providerSummary(outcome: { text: string; reasoningText: string; calls: ToolCall[]; reasoning?: unknown[]; usage?: Usage; stopReason: StopReason | undefined }): GeminiSummary {
  const signatures = (outcome.reasoning ?? []).flatMap((part) => {
    const signature = (part as { thoughtSignature?: unknown }).thoughtSignature;
    return typeof signature === 'string' ? [signature] : [];
  });
  return {
    text: outcome.text,
    thoughts: outcome.reasoningText,
    calls: outcome.calls.map((call) => ({ name: call.name, args: call.input, id: call.id })),
    signatures,
    ...(outcome.usage !== undefined && { usage: outcome.usage }),
    stopReason: outcome.stopReason ?? 'error',
  };
}

/** Where the provider and the SDK differ: `[]` when they agree. */
export function sdkDifferences(ours: GeminiSummary, sdk: GeminiSummary): string[] {
  const found: string[] = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  if (ours.text !== sdk.text) found.push(`text: ${ours.text.length} vs the SDK's ${sdk.text.length} characters`);
  if (ours.thoughts !== sdk.thoughts) found.push(`thoughts: ${ours.thoughts.length} vs the SDK's ${sdk.thoughts.length} characters`);
  if (ours.calls.length !== sdk.calls.length) found.push(`calls: ${ours.calls.length} vs the SDK's ${sdk.calls.length}`);
  sdk.calls.forEach((theirs, n) => {
    const mine = ours.calls[n];
    if (mine === undefined) return;
    if (mine.name !== theirs.name) found.push(`call ${n}: ${mine.name} vs the SDK's ${theirs.name}`);
    if (theirs.args !== undefined && !same(mine.args, theirs.args)) found.push(`call ${n}: arguments ${JSON.stringify(mine.args)} vs the SDK's ${JSON.stringify(theirs.args)}`);
    if (theirs.id !== undefined && mine.id !== theirs.id) found.push(`call ${n}: id ${mine.id} vs the SDK's ${theirs.id}`);
  });
  if (!same(ours.signatures, sdk.signatures)) found.push(`signatures: ${ours.signatures.length} vs the SDK's ${sdk.signatures.length} (or not the same)`);
  if (!same(ours.usage, sdk.usage)) found.push(`usage: ${JSON.stringify(ours.usage)} vs the SDK's ${JSON.stringify(sdk.usage)}`);
  if (ours.stopReason !== sdk.stopReason) found.push(`stop reason: ${ours.stopReason} vs ${sdk.stopReason} from the SDK's finish reason`);
  return found;
}
