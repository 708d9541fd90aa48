/**
 * O2 revised: traceLoop's spans read against the GenAI semantic conventions' own constants
 * (`@opentelemetry/semantic-conventions/incubating`, a devDependency: the library never imports it).
 */
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_COMPLETION,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROMPT,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_SYSTEM,
  ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_COMPLETION_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_PROMPT_TOKENS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
  GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
} from '@opentelemetry/semantic-conventions/incubating';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { lastValueFrom, of, toArray } from 'rxjs';
import { ToolRegistry, agentTool, anthropicProvider, conversation, openAIChatProvider, openAIResponsesProvider, runEventedToolLoop, scriptedProvider, type ConversationEvent, type LoopEvent, type ProviderInput } from 'rx-tool-loop';
import { traceLoop } from 'rx-tool-loop/otel';
import { answerTurn, call, end, only, start, text, tool, toolTurn } from '../support/events.js';
import { memoryTracer, parentOf, spanNamed } from './memory-tracer.js';

const clock = tool('current_time', () => '2026-01-01T00:00:00Z');
const search = tool('search', (input: Record<string, string>) => `results for ${input.q ?? ''}`, { q: 'the query' });

/** A researcher on its own model, asking `search` once, then answering. */
const researcher = (model?: string) =>
  agentTool({
    name: 'researcher',
    description: 'researches a question',
    input: { question: 'what to find out' },
    ...(model === undefined ? {} : { model }),
    agent: (input, { signal }) =>
      runEventedToolLoop({
        provider: scriptedProvider([toolTurn(call('search', { q: 'time zones' }, 'r1')), answerTurn('UTC')]),
        registry: new ToolRegistry().register(search),
        messages: [{ role: 'user', content: String(input.question) }],
        signal,
      }),
  });

/** A conversation of two prompts; the first asks the clock, an unknown tool and the researcher (on `model`). */
async function tracedConversation({ model, ...options }: { providerName?: string; conversationId?: string; recordContent?: boolean; model?: string }): Promise<ReadableSpan[]> {
  const memory = memoryTracer();
  const provider = scriptedProvider([
    toolTurn(call('current_time', {}, 'c1'), call('nope', {}, 'c2'), call('researcher', { question: 'which zone?' }, 'c3')),
    (input: ProviderInput) => [start, text(`It is ${String(input.messages[2]?.content)}`), end('stop')],
    answerTurn('You are welcome.'),
  ]);
  const registry = new ToolRegistry().register(clock).register(researcher(model));
  const events = await lastValueFrom(
    of('What time is it?', 'Thanks!').pipe(
      conversation({ provider, registry, messages: [{ role: 'system', content: 'Be brief.' }] }),
      traceLoop<ConversationEvent>({ tracer: memory.tracer, agentName: 'clock', model: 'gpt-4o-mini', ...options }),
      toArray(),
    ),
  );
  expect(only(events, 'loop_end')).toHaveLength(2);
  expect(memory.ends().every((span) => span.ends === 1)).toBe(true);
  return memory.finished();
}

/** The attribute names of the conventions this library records, each the conventions' own constant. */
const RECORDED = new Set<string>([
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
]);

/** What the conventions replaced or removed: never recorded. */
const REPLACED = [ATTR_GEN_AI_SYSTEM, ATTR_GEN_AI_PROMPT, ATTR_GEN_AI_COMPLETION, ATTR_GEN_AI_USAGE_PROMPT_TOKENS, ATTR_GEN_AI_USAGE_COMPLETION_TOKENS];

const kindOf = (span: ReadableSpan) => span.attributes[ATTR_GEN_AI_OPERATION_NAME];

describe('traceLoop and the GenAI semantic conventions (O2 revised)', () => {
  it('O2 (revised): every gen_ai.* attribute of every span is one of the conventions\' names, none of those they replaced; the operations are theirs; no span event (deprecated for content)', async () => {
    const spans = await tracedConversation({ providerName: GEN_AI_PROVIDER_NAME_VALUE_OPENAI, conversationId: 'conv-1', recordContent: true, model: 'claude-haiku-4-5' });
    const names = new Set(spans.flatMap((span) => Object.keys(span.attributes)).filter((name) => name.startsWith('gen_ai.')));
    expect([...names].filter((name) => !RECORDED.has(name))).toEqual([]);
    for (const replaced of REPLACED) expect(names.has(replaced)).toBe(false);
    // the recorded content is there to be checked at all
    for (const name of [ATTR_GEN_AI_INPUT_MESSAGES, ATTR_GEN_AI_OUTPUT_MESSAGES, ATTR_GEN_AI_SYSTEM_INSTRUCTIONS, ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, ATTR_GEN_AI_TOOL_CALL_RESULT]) expect(names.has(name)).toBe(true);
    expect(new Set(spans.map(kindOf))).toEqual(new Set([GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT, GEN_AI_OPERATION_NAME_VALUE_CHAT, GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL]));
    expect(spans.filter((span) => span.events.length > 0).map((span) => span.name)).toEqual([]);
  });

  it('O2 (revised): the chat and invoke_agent spans carry gen_ai.provider.name as given (the conventions\' values), inner loops\' too; the execute_tool spans do not', async () => {
    const spans = await tracedConversation({ providerName: GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC });
    const chats = spans.filter((span) => kindOf(span) === GEN_AI_OPERATION_NAME_VALUE_CHAT);
    expect(chats).toHaveLength(5); // two turns, the researcher's two, the second prompt's one
    for (const span of spans) {
      expect(span.attributes[ATTR_GEN_AI_PROVIDER_NAME]).toBe(kindOf(span) === GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL ? undefined : GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC);
    }
    // not given, not made up
    for (const span of await tracedConversation({})) expect(span.attributes[ATTR_GEN_AI_PROVIDER_NAME]).toBeUndefined();
  });

  it('O2 (revised): every span of every loop of a conversation carries gen_ai.conversation.id — both loops, the inner agent\'s, a call that never started — so one query finds them all', async () => {
    const spans = await tracedConversation({ conversationId: 'conv_5j66UpCpwteGg4YSxUnt7lPY' });
    expect(spans.filter((span) => kindOf(span) === GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT)).toHaveLength(3);
    expect(spans.map((span) => [span.name, span.attributes[ATTR_GEN_AI_CONVERSATION_ID]]).filter(([, id]) => id !== 'conv_5j66UpCpwteGg4YSxUnt7lPY')).toEqual([]);
    expect(spanNamed(spans, 'execute_tool nope').attributes['rx_tool_loop.tool.started']).toBe(false);
    for (const span of await tracedConversation({})) expect(span.attributes[ATTR_GEN_AI_CONVERSATION_ID]).toBeUndefined();
  });

  it('O2 (revised), A1: an inner agent\'s model is named: agentTool\'s model is its invoke_agent\'s and its chat spans\' gen_ai.request.model and the chat spans\' name; without it, neither is', async () => {
    const named = await tracedConversation({ model: 'claude-haiku-4-5' });
    const inner = spanNamed(named, 'invoke_agent researcher');
    expect(inner.attributes[ATTR_GEN_AI_REQUEST_MODEL]).toBe('claude-haiku-4-5');
    const innerChats = named.filter((span) => kindOf(span) === GEN_AI_OPERATION_NAME_VALUE_CHAT && parentOf(named, span) === inner);
    expect(innerChats.map((span) => [span.name, span.attributes[ATTR_GEN_AI_REQUEST_MODEL]])).toEqual([
      ['chat claude-haiku-4-5', 'claude-haiku-4-5'],
      ['chat claude-haiku-4-5', 'claude-haiku-4-5'],
    ]);
    // the outer loop keeps its own
    expect(named.filter((span) => span.name === 'chat gpt-4o-mini')).toHaveLength(3);
    const unnamed = await tracedConversation({});
    const plain = spanNamed(unnamed, 'invoke_agent researcher');
    expect(plain.attributes[ATTR_GEN_AI_REQUEST_MODEL]).toBeUndefined();
    expect(unnamed.filter((span) => parentOf(unnamed, span) === plain && kindOf(span) === GEN_AI_OPERATION_NAME_VALUE_CHAT).map((span) => span.name)).toEqual(['chat', 'chat']);
  });

  it('O2 (revised): the content attributes follow the conventions\' message schemas: roles and typed parts, a finish reason on each output message, system instructions as parts', async () => {
    const spans = await tracedConversation({ recordContent: true });
    const roles = new Set(['user', 'assistant', 'tool', 'system']);
    const parts = new Set(['text', 'tool_call', 'tool_call_response', 'reasoning']);
    let checked = 0;
    for (const span of spans) {
      for (const name of [ATTR_GEN_AI_INPUT_MESSAGES, ATTR_GEN_AI_OUTPUT_MESSAGES]) {
        const value = span.attributes[name];
        if (value === undefined) continue;
        const messages = JSON.parse(String(value)) as { role: string; parts: { type: string }[]; finish_reason?: string }[];
        for (const message of messages) {
          expect(roles.has(message.role)).toBe(true);
          for (const part of message.parts) expect(parts.has(part.type)).toBe(true);
          expect(typeof message.finish_reason === 'string').toBe(name === ATTR_GEN_AI_OUTPUT_MESSAGES);
          checked++;
        }
      }
      const instructions = span.attributes[ATTR_GEN_AI_SYSTEM_INSTRUCTIONS];
      if (instructions !== undefined) expect(JSON.parse(String(instructions))).toEqual([{ type: 'text', content: 'Be brief.' }]);
    }
    expect(checked).toBeGreaterThan(10);
  });

  it('O2 (revised): the real providers name themselves as the conventions do (providerName) with their model; traceLoop({ provider }) reads both at call time, and providerName / model given win', async () => {
    const openai = openAIChatProvider({ model: 'gpt-4o-mini', apiKey: 'k' });
    const responses = openAIResponsesProvider({ model: 'gpt-5-mini', apiKey: 'k' });
    const anthropic = anthropicProvider({ model: 'claude-sonnet-4-5', apiKey: 'k' });
    expect([openai, responses, anthropic].map(({ providerName, model }) => [providerName, model])).toEqual([
      [GEN_AI_PROVIDER_NAME_VALUE_OPENAI, 'gpt-4o-mini'],
      [GEN_AI_PROVIDER_NAME_VALUE_OPENAI, 'gpt-5-mini'],
      [GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC, 'claude-sonnet-4-5'],
    ]);
    const chatOf = async (options: Omit<Parameters<typeof traceLoop>[0], 'tracer'>) => {
      const memory = memoryTracer();
      const loop = runEventedToolLoop({ provider: scriptedProvider([answerTurn('Hi.')]), registry: new ToolRegistry(), messages: [{ role: 'user', content: 'hello' }] });
      await lastValueFrom(loop.pipe(traceLoop<LoopEvent>({ tracer: memory.tracer, ...options })));
      const chat = memory.finished().find((span) => kindOf(span) === GEN_AI_OPERATION_NAME_VALUE_CHAT)!;
      return [chat.name, chat.attributes[ATTR_GEN_AI_PROVIDER_NAME], chat.attributes[ATTR_GEN_AI_REQUEST_MODEL]];
    };
    expect(await chatOf({ provider: anthropic })).toEqual(['chat claude-sonnet-4-5', 'anthropic', 'claude-sonnet-4-5']);
    expect(await chatOf({ provider: openai, providerName: 'azure.ai.openai', model: 'my-deployment' })).toEqual(['chat my-deployment', 'azure.ai.openai', 'my-deployment']);
    expect(await chatOf({ provider: scriptedProvider([]) })).toEqual(['chat', undefined, undefined]);
    expect(() => traceLoop({ tracer: memoryTracer().tracer, provider: 'openai' as never })).toThrow(new TypeError('traceLoop: provider must be the loop\'s provider (a function), got "openai", a string'));
    expect(() => traceLoop({ tracer: memoryTracer().tracer, conversationId: 7 as never })).toThrow(new TypeError('traceLoop: conversationId must be a string, got 7, a number'));
  });
});
