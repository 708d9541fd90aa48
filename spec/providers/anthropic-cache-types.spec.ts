/**
 * P19: the request bodies with their cache breakpoints, type-checked against the official `@anthropic-ai/sdk`
 * package's `MessageCreateParamsStreaming` (a pinned devDependency), excess properties refused.
 */
import type { AgentMessage } from '../../src/index.js';
import { anthropicRequest } from '../../src/providers/anthropic.js';
import { history, timeSpec, weatherSpec } from './conversation';
import { breakpoints } from './cache-breakpoints';
import { typeErrors } from './sdk-types';

describe('anthropicProvider: the marked bodies as the official SDK types them', () => {
  it('P19: the bodies, marked, type-check as @anthropic-ai/sdk\'s MessageCreateParamsStreaming (excess properties refused)', () => {
    const thinking: AgentMessage[] = [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: '', stopReason: 'toolUse', reasoning: [{ type: 'thinking', thinking: 'call it', signature: 'sig' }], toolCalls: [{ id: 't1', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'toolResult', toolCallId: 't1', toolName: 'get_weather', content: '18°C', isError: false },
    ];
    const bodies = [
      anthropicRequest('claude-sonnet-4-5', 1024, 'Be brief.', { messages: history, tools: [weatherSpec, timeSpec] }, { cache: 'auto', toolChoice: 'required' }),
      anthropicRequest('claude-sonnet-4-5', 1024, undefined, { messages: [{ role: 'user', content: 'Hi' }], tools: [] }, { cache: 'auto' }),
      anthropicRequest('claude-sonnet-4-5', 16000, undefined, { messages: thinking, tools: [weatherSpec] }, { cache: 'auto', thinking: 8000 }),
    ];
    expect(bodies.map((body) => breakpoints(body))).toEqual([['system.0', 'messages.6.content.0', 'tools.1'], ['messages.0.content.0'], ['messages.2.content.0', 'tools.0']]);
    // the check can fail: a mark of a kind the API does not know is refused
    const wrong = { ...bodies[1]!, system: [{ type: 'text', text: 'x', cache_control: { type: 'forever' } }] };
    const errors = typeErrors('@anthropic-ai/sdk/resources/messages', 'MessageCreateParamsStreaming', [...bodies, wrong]);
    expect(errors.slice(0, 3)).toEqual([[], [], []]);
    expect(errors[3]!.join('\n')).toMatch(/"forever"/);
  }, 60_000);

});
