/**
 * F2: each provider sends attachments as its API takes them — in user messages and in tool results — and what an
 * API cannot take becomes a text line that says so, never a silent drop. The bodies are type-checked against the
 * official SDKs' request types (`openai` 7.60.0, `@anthropic-ai/sdk` 1.17.0), as spec/providers/sdk-types.ts does.
 */
import type { AgentMessage, Attachment, ProviderInput } from '../../src/index.js';
import { RESULTS_ATTACHMENTS, openAIChatRequest } from '../../src/providers/openai.js';
import { openAIResponsesRequest } from '../../src/providers/openai-responses.js';
import { anthropicRequest } from '../../src/providers/anthropic.js';
import { typeErrors } from './sdk-types';
import { weatherSpec } from './conversation';

const png = Buffer.from('\x89PNG\r\n\x1a\nnot really a picture').toString('base64');
const wavBytes = 48213;
const wav = Buffer.alloc(wavBytes, 7).toString('base64');
const pdf = Buffer.from('%PDF-1.4 a tiny document').toString('base64');
const csv = Buffer.from('city,°C\nParis,18\n').toString('base64');

const image: Attachment = { type: 'image', mimeType: 'image/png', data: png };
const imageUrl: Attachment = { type: 'image', mimeType: 'image/jpeg', url: 'https://example.com/cat.jpg' };
const audio: Attachment = { type: 'audio', mimeType: 'audio/wav', data: wav };
const audioUrl: Attachment = { type: 'audio', mimeType: 'audio/mpeg', url: 'https://example.com/a.mp3' };
const file: Attachment = { type: 'file', mimeType: 'application/pdf', data: pdf, name: 'report.pdf' };
const fileUrl: Attachment = { type: 'file', mimeType: 'application/pdf', url: 'https://example.com/r.pdf' };
const table: Attachment = { type: 'file', mimeType: 'text/csv', data: csv, name: 'weather.csv' };
const dataUrlImage: Attachment = { type: 'image', mimeType: 'image/png', url: `data:image/png;base64,${png}` };

/** Every kind, in a user message and in results, with a plain result between them and a prompt after. */
const history: AgentMessage[] = [
  { role: 'user', content: 'What is in these?', attachments: [image, imageUrl, audio, audioUrl, file, fileUrl, table, dataUrlImage] },
  {
    role: 'assistant',
    content: '',
    stopReason: 'toolUse',
    toolCalls: [
      { id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      { id: 'call_2', name: 'get_weather', input: { city: 'Oslo' } },
      { id: 'call_3', name: 'get_weather', input: { city: 'Rome' } },
    ],
  },
  { role: 'toolResult', toolCallId: 'call_1', toolName: 'get_weather', content: 'a chart', isError: false, attachments: [image, audio] },
  { role: 'toolResult', toolCallId: 'call_2', toolName: 'get_weather', content: '3°C', isError: false },
  { role: 'toolResult', toolCallId: 'call_3', toolName: 'get_weather', content: '', isError: false, attachments: [file, fileUrl] },
  { role: 'assistant', content: 'Sunny.', stopReason: 'stop' },
  { role: 'user', content: 'Thanks', attachments: [] },
];
const input: ProviderInput = { messages: history, tools: [weatherSpec] };
const plain: ProviderInput = { messages: [{ role: 'user', content: 'hi' }], tools: [] };

const chat = openAIChatRequest({ model: 'gpt-4o' }, input) as { messages: { role: string; content: unknown }[] };
const responses = openAIResponsesRequest({ model: 'gpt-4.1' }, input) as { input: { role?: string; type?: string; content?: unknown; output?: unknown }[] };
const anthropic = anthropicRequest('claude-sonnet-4-5', 1024, undefined, input) as { messages: { role: string; content: unknown }[] };

describe('F2: attachments as each API takes them', () => {
  it('F2: the bodies type-check against the official SDKs (openai Chat and Responses, @anthropic-ai/sdk); a wrong part does not', () => {
    const wrongChat = { model: 'm', stream: true, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: png }] }] };
    const wrongAnthropic = { model: 'm', max_tokens: 1, stream: true, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: png } }] }] };
    const [chatErrors, wrongChatErrors] = typeErrors('openai/resources/chat/completions', 'ChatCompletionCreateParamsStreaming', [chat, wrongChat]);
    const [responsesErrors] = typeErrors('openai/resources/responses/responses', 'ResponseCreateParamsStreaming', [responses]);
    const [anthropicErrors, wrongAnthropicErrors] = typeErrors('@anthropic-ai/sdk/resources/messages', 'MessageCreateParamsStreaming', [anthropic, wrongAnthropic]);
    expect({ chatErrors, responsesErrors, anthropicErrors }).toEqual({ chatErrors: [], responsesErrors: [], anthropicErrors: [] });
    expect(wrongChatErrors!.join('\n')).toMatch(/image_url/);
    expect(wrongAnthropicErrors!.join('\n')).toMatch(/image\/bmp/);
  }, 90_000);

  it('F2: a history without attachments is sent as before: text content, no parts', () => {
    expect((openAIChatRequest({ model: 'm' }, plain) as typeof chat).messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect((openAIResponsesRequest({ model: 'm' }, plain) as typeof responses).input).toEqual([{ role: 'user', content: 'hi' }]);
    expect((anthropicRequest('m', 1, undefined, plain) as typeof anthropic).messages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('F2: Chat Completions: image_url, input_audio and file parts; what it cannot take is a line; an empty list sends the text as a part', () => {
    expect(chat.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is in these?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
        { type: 'input_audio', input_audio: { data: wav, format: 'wav' } },
        { type: 'text', text: '[audio audio/mpeg, https://example.com/a.mp3: not sent, API takes audio only as data]' },
        { type: 'file', file: { file_data: `data:application/pdf;base64,${pdf}`, filename: 'report.pdf' } },
        { type: 'text', text: '[file application/pdf, https://example.com/r.pdf: not sent, API takes files only as data]' },
        { type: 'file', file: { file_data: `data:text/csv;base64,${csv}`, filename: 'weather.csv' } },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
      ],
    });
    expect(chat.messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'Thanks' }] });
  });

  it("F2: Chat Completions: tool messages stay text; the turn's result attachments follow in ONE user message right after the results", () => {
    expect(chat.messages.slice(2).map((m) => m.role)).toEqual(['tool', 'tool', 'tool', 'user', 'assistant', 'user']);
    expect(chat.messages[2]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'a chart' });
    expect(chat.messages[5]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: RESULTS_ATTACHMENTS },
        { type: 'text', text: 'get_weather (call_1):' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
        { type: 'input_audio', input_audio: { data: wav, format: 'wav' } },
        { type: 'text', text: 'get_weather (call_3):' },
        { type: 'file', file: { file_data: `data:application/pdf;base64,${pdf}`, filename: 'report.pdf' } },
        { type: 'text', text: '[file application/pdf, https://example.com/r.pdf: not sent, API takes files only as data]' },
      ],
    });
    expect(RESULTS_ATTACHMENTS).toBe('Attachments of the results above:');
    // the usual case: the history ends with the results (the call right after the tools)
    const next = openAIChatRequest({ model: 'm' }, { messages: history.slice(0, 5), tools: [weatherSpec] }) as typeof chat;
    expect(next.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'user']);
    expect(next.messages.at(-1)).toEqual(chat.messages[5]);
  });

  it('F2: Responses: input_image and input_file parts; function_call_output with an output array; audio is a line', () => {
    const [user] = responses.input;
    expect(user).toEqual({
      role: 'user',
      content: [
        { type: 'input_text', text: 'What is in these?' },
        { type: 'input_image', image_url: `data:image/png;base64,${png}`, detail: 'auto' },
        { type: 'input_image', image_url: 'https://example.com/cat.jpg', detail: 'auto' },
        { type: 'input_text', text: `[audio audio/wav, ${wavBytes} bytes: not sent, API takes no audio]` },
        { type: 'input_text', text: '[audio audio/mpeg, https://example.com/a.mp3: not sent, API takes no audio]' },
        { type: 'input_file', file_data: `data:application/pdf;base64,${pdf}`, filename: 'report.pdf' },
        { type: 'input_file', file_url: 'https://example.com/r.pdf', filename: 'file' },
        { type: 'input_file', file_data: `data:text/csv;base64,${csv}`, filename: 'weather.csv' },
        { type: 'input_image', image_url: `data:image/png;base64,${png}`, detail: 'auto' },
      ],
    });
    const outputs = responses.input.filter((item) => item.type === 'function_call_output');
    expect(outputs).toEqual([
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: [
          { type: 'input_text', text: 'a chart' },
          { type: 'input_image', image_url: `data:image/png;base64,${png}`, detail: 'auto' },
          { type: 'input_text', text: `[audio audio/wav, ${wavBytes} bytes: not sent, API takes no audio]` },
        ],
      },
      { type: 'function_call_output', call_id: 'call_2', output: '3°C' },
      {
        type: 'function_call_output',
        call_id: 'call_3',
        output: [
          { type: 'input_file', file_data: `data:application/pdf;base64,${pdf}`, filename: 'report.pdf' },
          { type: 'input_file', file_url: 'https://example.com/r.pdf', filename: 'file' },
        ],
      },
    ]);
  });

  it('F2: Anthropic: image and document blocks, tool_result content blocks; audio and what else it cannot take is a line with the decoded size', () => {
    const [user, , results] = anthropic.messages;
    expect(user).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is in these?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        { type: 'text', text: `[audio audio/wav, ${wavBytes} bytes: not sent, API takes no audio]` },
        { type: 'text', text: '[audio audio/mpeg, https://example.com/a.mp3: not sent, API takes no audio]' },
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf }, title: 'report.pdf' },
        { type: 'document', source: { type: 'url', url: 'https://example.com/r.pdf' } },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'city,°C\nParis,18\n' }, title: 'weather.csv' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
      ],
    });
    expect(results).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'call_1',
          is_error: false,
          content: [
            { type: 'text', text: 'a chart' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
            { type: 'text', text: `[audio audio/wav, ${wavBytes} bytes: not sent, API takes no audio]` },
          ],
        },
        { type: 'tool_result', tool_use_id: 'call_2', is_error: false, content: '3°C' },
        {
          type: 'tool_result',
          tool_use_id: 'call_3',
          is_error: false,
          content: [
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf }, title: 'report.pdf' },
            { type: 'document', source: { type: 'url', url: 'https://example.com/r.pdf' } },
          ],
        },
      ],
    });
  });

  it('F2: what an API cannot take is a line, never a drop: a bmp image, a zip on Anthropic, ogg audio on Chat Completions', () => {
    const zip: Attachment = { type: 'file', mimeType: 'application/zip', data: 'UEsDBA==', name: 'a.zip' };
    const bmp: Attachment = { type: 'image', mimeType: 'image/bmp', data: 'Qk0=' };
    const ogg: Attachment = { type: 'audio', mimeType: 'audio/ogg', data: 'T2dnUw==' };
    const messages: AgentMessage[] = [{ role: 'user', content: '', attachments: [bmp, zip, ogg] }];
    expect((anthropicRequest('m', 1, undefined, { messages, tools: [] }) as typeof anthropic).messages[0]!.content).toEqual([
      { type: 'text', text: '[image image/bmp, 2 bytes: not sent, API takes jpeg, png, gif and webp images only]' },
      { type: 'text', text: '[file application/zip, 4 bytes: not sent, API takes PDF and text files only]' },
      { type: 'text', text: '[audio audio/ogg, 4 bytes: not sent, API takes no audio]' },
    ]);
    expect((openAIChatRequest({ model: 'm' }, { messages, tools: [] }) as typeof chat).messages[0]!.content).toEqual([
      { type: 'text', text: '[image image/bmp, 2 bytes: not sent, API takes jpeg, png, gif and webp images only]' },
      { type: 'file', file: { file_data: 'data:application/zip;base64,UEsDBA==', filename: 'a.zip' } },
      { type: 'text', text: '[audio audio/ogg, 4 bytes: not sent, API takes wav or mp3 audio only]' },
    ]);
    expect((openAIResponsesRequest({ model: 'm' }, { messages, tools: [] }) as typeof responses).input[0]!.content).toEqual([
      { type: 'input_text', text: '[image image/bmp, 2 bytes: not sent, API takes jpeg, png, gif and webp images only]' },
      { type: 'input_file', file_data: 'data:application/zip;base64,UEsDBA==', filename: 'a.zip' },
      { type: 'input_text', text: '[audio audio/ogg, 4 bytes: not sent, API takes no audio]' },
    ]);
  });
});
