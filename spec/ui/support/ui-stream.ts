/**
 * U2's checks, on `ai`'s own validators: every chunk passes `uiMessageChunkSchema`, and `readUIMessageStream`
 * rebuilds the message; its steps are compared with the loop's history, step for turn.
 */
import { readUIMessageStream, uiMessageChunkSchema } from 'ai';
import type { UIMessage, UIMessageChunk } from 'ai';
import type { AgentMessage } from '../../../src/index.js';

/** Each chunk that `uiMessageChunkSchema` refuses, with why. */
export async function invalidChunks(chunks: readonly UIMessageChunk[]): Promise<string[]> {
  const schema = uiMessageChunkSchema();
  const refused: string[] = [];
  for (const chunk of chunks) {
    const checked = await schema.validate!(chunk);
    if (!checked.success) refused.push(`${JSON.stringify(chunk)}: ${String(checked.error)}`);
  }
  return refused;
}

/** The message `readUIMessageStream` builds from the chunks (continuing `message` when given, as useChat does). */
export async function rebuild(chunks: readonly UIMessageChunk[], message?: UIMessage): Promise<UIMessage> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last: UIMessage | undefined;
  const failures: unknown[] = [];
  for await (const built of readUIMessageStream({ stream, ...(message === undefined ? {} : { message }), onError: (error) => failures.push(error), terminateOnError: false })) last = built;
  // an `error` chunk is told to onError: those are expected, anything else is a chunk the reader could not take
  const told = chunks.flatMap((chunk) => (chunk.type === 'error' ? [chunk.errorText] : []));
  const failed = failures.map((failure) => (failure instanceof Error ? failure.message : String(failure)));
  if (failed.join('\n') !== told.join('\n')) throw new Error(`readUIMessageStream failed: ${failed.join('; ')}`);
  if (last === undefined) {
    if (message !== undefined) return message;
    throw new Error('readUIMessageStream built no message');
  }
  return last;
}

/** One step as both sides hold it: the text, the reasoning, and each call with what became of it. */
export interface Step {
  text: string;
  reasoning: string;
  tools: { id: string; name: string; input: unknown; result?: { content: string; isError: boolean } }[];
}

/** The steps of a rebuilt message: the parts after each `step-start`. */
export function stepsOfMessage(message: UIMessage): Step[] {
  const steps: Step[] = [];
  for (const part of message.parts as Record<string, unknown>[]) {
    if (part['type'] === 'step-start') {
      steps.push({ text: '', reasoning: '', tools: [] });
      continue;
    }
    const step = steps[steps.length - 1];
    if (step === undefined) throw new Error(`a part before any step-start: ${JSON.stringify(part)}`);
    const type = String(part['type']);
    if (type === 'text') step.text += String(part['text']);
    else if (type === 'reasoning') step.reasoning += String(part['text']);
    else if (type.startsWith('tool-') && part['state'] !== 'input-streaming') {
      // a part still streaming its input never became a call (the run stopped while its arguments came)
      const state = part['state'];
      const tool: Step['tools'][number] = { id: String(part['toolCallId']), name: type.slice(5), input: part['input'] };
      if (state === 'output-available' && part['preliminary'] !== true) tool.result = { content: String(part['output']), isError: false };
      if (state === 'output-error') tool.result = { content: String(part['errorText']), isError: true };
      step.tools.push(tool);
    }
  }
  return steps;
}

/**
 * The steps of a loop's history after its first `from` messages: an assistant message and its results are one step;
 * a resumed turn 0 (`resumed`: the saved message's calls) is a step of the results alone, as the stream sends it.
 */
export function stepsOfHistory(messages: readonly AgentMessage[], from: number): Step[] {
  const steps: Step[] = [];
  for (const message of messages.slice(from)) {
    if (message.role === 'assistant') {
      const reasoning = (message.reasoning ?? []).map((block) => String((block as { thinking?: unknown }).thinking ?? '')).join('');
      steps.push({ text: message.content, reasoning, tools: (message.toolCalls ?? []).map(({ id, name, input }) => ({ id, name, input })) });
    } else if (message.role === 'toolResult') {
      const tool = steps[steps.length - 1]?.tools.find((t) => t.id === message.toolCallId);
      if (tool === undefined) throw new Error(`a result of no call of its step: ${message.toolCallId}`);
      tool.result = { content: message.content, isError: message.isError };
    }
  }
  return steps;
}
