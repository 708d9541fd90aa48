/** M8: a sampling request as the provider's input, and a provider's reply as the SDK's CreateMessageResult. */
import { EMPTY, firstValueFrom } from 'rxjs';
import { scriptedProvider } from 'rx-tool-loop';
import { sampled, samplingInput } from '../../src/mcp/mcp-sampling.js';

const input = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };

describe('M8: samplingInput and sampled', () => {
  it('M8: no system prompt, no system message; an assistant\'s image, a tool use and a request with toolChoice are refused', () => {
    expect(samplingInput({ maxTokens: 5, messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] })).toEqual(input);
    expect(() => samplingInput({ maxTokens: 5, messages: [{ role: 'assistant', content: { type: 'image', data: 'AA==', mimeType: 'image/png' } }] })).toThrow(
      'rx-tool-loop: cannot sample image content in a message of the assistant',
    );
    expect(() => samplingInput({ maxTokens: 5, messages: [{ role: 'assistant', content: { type: 'tool_use', id: 't', name: 'x', input: {} } }] })).toThrow('cannot sample tool_use content');
    expect(() => samplingInput({ maxTokens: 5, messages: [], toolChoice: { mode: 'auto' } })).toThrow('rx-tool-loop: sampling with tools is not supported');
  });

  it('M8: stop is endTurn and a model the provider does not name is unknown; a provider that ends with no reply is an error', async () => {
    const provider = scriptedProvider([[{ type: 'message_start' }, { type: 'text_delta', text: 'yes' }, { type: 'message_end', stopReason: 'stop' }]]);
    await expect(firstValueFrom(sampled(provider, input))).resolves.toEqual({ role: 'assistant', content: { type: 'text', text: 'yes' }, model: 'unknown', stopReason: 'endTurn' });
    await expect(firstValueFrom(sampled(() => EMPTY, input))).rejects.toThrow('rx-tool-loop: the provider ended with no reply');
  });
});
