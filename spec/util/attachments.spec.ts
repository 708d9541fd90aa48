/** F1: attachments are checked — a history's at call time (R21), a tool's when it returns — and F4's one line of each. */
import { lastValueFrom, of, toArray } from 'rxjs';
import { AgentMessage, Attachment, ToolRegistry, runEventedToolLoop, scriptedProvider } from '../../src/index.js';
import { attachmentLine, attachmentsProblem, base64Bytes, inlineData } from '../../src/util/attachments.js';
import { answerTurn, call, loopEndOf, only, tool, toolTurn } from '../support/events.js';

const png: Attachment = { type: 'image', mimeType: 'image/png', data: Buffer.alloc(1234, 1).toString('base64') };
const asks: AgentMessage = { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'c1', name: 'read', input: {} }] };

/** Calls the loop with `messages` (never subscribed: the check runs at call time). */
const loopWith = (messages: readonly unknown[]) => () =>
  runEventedToolLoop({ provider: scriptedProvider([answerTurn('ok')]), registry: new ToolRegistry(), messages: messages as AgentMessage[] });

describe('F1: attachments are checked', () => {
  it.each<[string, unknown, string]>([
    ['not an array', png, 'messages[0].attachments must be an array (got {"type":"image","mimeType":"image/png","data":"AQEBAQEBAQ..., an object)'],
    ['an entry that is not an object', [png, 'x.png'], 'messages[0].attachments[1] must be an object (got "x.png", a string)'],
    ['an unknown type', [{ ...png, type: 'video' }], `messages[0].attachments[0].type must be 'image', 'audio' or 'file' (got "video", a string)`],
    ['no mimeType', [{ type: 'image', data: 'AAAA' }], 'messages[0].attachments[0].mimeType must be a non-empty string (got undefined)'],
    ['both data and url', [{ ...png, url: 'https://example.com/a.png' }], 'messages[0].attachments[0] must have exactly one of data (base64) and url'],
    ['neither data nor url', [{ type: 'file', mimeType: 'text/plain' }], 'messages[0].attachments[0] must have exactly one of data (base64) and url'],
    ['data that is not base64', [{ type: 'file', mimeType: 'text/plain', data: 'hello world' }], 'messages[0].attachments[0].data must be standard base64 text (got "hello world", a string)'],
    ['data without its padding', [{ type: 'file', mimeType: 'text/plain', data: 'aGk' }], 'messages[0].attachments[0].data must be standard base64 text (got "aGk", a string)'],
    ['a url of another scheme', [{ type: 'file', mimeType: 'text/plain', url: 'file:///etc/passwd' }], 'messages[0].attachments[0].url must be an http:, https: or data: URL (got "file:///etc/passwd", a string)'],
    ['a name that is not a string', [{ ...png, name: 7 }], 'messages[0].attachments[0].name must be a string (got 7, a number)'],
  ])('F1: a user message with %s throws at call time, naming the message and the attachment', (_, attachments, message) => {
    expect(loopWith([{ role: 'user', content: 'look', attachments }])).toThrow(new TypeError(`runEventedToolLoop: ${message}`));
  });

  it("F1: a tool result's attachments are checked too, at its index", () => {
    const bad = { role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: 'x', isError: false, attachments: [png, { ...png, data: '#' }] };
    expect(loopWith([{ role: 'user', content: 'hi' }, asks, bad])).toThrow(
      new TypeError('runEventedToolLoop: messages[2].attachments[1].data must be standard base64 text (got "#", a string)'),
    );
  });

  it('F1: valid attachments pass: base64 data, an https URL, a data: URL, an empty list', () => {
    const fine: Attachment[] = [png, { type: 'file', mimeType: 'application/pdf', url: 'https://example.com/a.pdf', name: 'a.pdf' }, { type: 'audio', mimeType: 'audio/wav', url: 'data:audio/wav;base64,UklGRg==' }];
    expect(loopWith([{ role: 'user', content: 'look', attachments: fine }, { role: 'user', content: 'and', attachments: [] }])).not.toThrow();
    expect(attachmentsProblem(fine)).toBeUndefined();
  });

  it('F1: a tool that returns an invalid attachment gets an error result naming it, and the loop goes on', async () => {
    const registry = new ToolRegistry()
      .register(tool('shot', () => ({ content: 'a chart', attachments: [png, { type: 'image', mimeType: 'image/png', url: 'ftp://x' }] })))
      .register(tool('ok', () => of({ content: 'fine', attachments: [png] })));
    const events = await lastValueFrom(
      runEventedToolLoop({ provider: scriptedProvider([toolTurn(call('shot'), call('ok')), answerTurn('seen')]), registry, messages: [{ role: 'user', content: 'go' }] }).pipe(toArray()),
    );
    const results = only(events, 'tool_result').map((e) => e.message);
    expect(results.map(({ content, isError, attachments }) => ({ content, isError, attachments }))).toEqual([
      { content: 'error: attachments[1].url must be an http:, https: or data: URL (got "ftp://x", a string)', isError: true, attachments: undefined },
      { content: 'fine', isError: false, attachments: [png] },
    ]);
    expect(loopEndOf(events).reason).toBe('stop');
  });

  it("F1: an afterToolCall hook's output is checked as a tool's", async () => {
    const registry = new ToolRegistry().register(tool('shot', () => 'x'));
    const events = await lastValueFrom(
      runEventedToolLoop({
        provider: scriptedProvider([toolTurn(call('shot')), answerTurn('seen')]),
        registry,
        messages: [{ role: 'user', content: 'go' }],
        afterToolCall: () => ({ content: 'y', attachments: [{ type: 'sound', mimeType: 'audio/wav', data: '' }] as never }),
      }).pipe(toArray()),
    );
    expect(only(events, 'tool_result')[0]!.message.content).toBe(`error: attachments[0].type must be 'image', 'audio' or 'file' (got "sound", a string)`);
  });

  it("F1: a beforeToolCall hook's answer is checked as a tool's output", async () => {
    const registry = new ToolRegistry().register(tool('shot', () => 'x'));
    const events = await lastValueFrom(
      runEventedToolLoop({
        provider: scriptedProvider([toolTurn(call('shot')), answerTurn('seen')]),
        registry,
        messages: [{ role: 'user', content: 'go' }],
        beforeToolCall: () => ({ action: 'answer', output: { content: 'cached', attachments: [{ type: 'image', mimeType: 'image/png', data: 'AAAA', url: 'https://x' }] } }),
      }).pipe(toArray()),
    );
    expect(only(events, 'tool_result')[0]!.message.content).toBe('error: attachments[0] must have exactly one of data (base64) and url');
  });

  it('F4: one line per attachment: its type, MIME type and decoded size, or its web URL', () => {
    expect(attachmentLine(png)).toBe('[image image/png, 1234 bytes]');
    expect(attachmentLine({ type: 'audio', mimeType: 'audio/wav', data: Buffer.alloc(48213).toString('base64') }, 'not sent, API takes no audio')).toBe(
      '[audio audio/wav, 48213 bytes: not sent, API takes no audio]',
    );
    expect(attachmentLine({ type: 'file', mimeType: 'application/pdf', url: 'https://example.com/a.pdf' })).toBe('[file application/pdf, https://example.com/a.pdf]');
    expect(attachmentLine({ type: 'image', mimeType: 'image/png', url: `data:image/png;base64,${png.data!}` })).toBe('[image image/png, 1234 bytes]');
    for (const size of [0, 1, 2, 3, 4, 5, 100]) expect(base64Bytes(Buffer.alloc(size).toString('base64'))).toBe(size);
  });
});

describe('F2: an attachment’s bytes, for the APIs that take them inline', () => {
  it('F2: inlineData is the data, a base64 data: URL’s payload, or a text data: URL encoded; none for a web URL or a malformed escape', () => {
    expect(inlineData({ type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' })).toBe('iVBORw0KGgo=');
    expect(inlineData({ type: 'image', mimeType: 'image/png', url: 'data:image/png;base64,iVBORw0KGgo=' })).toBe('iVBORw0KGgo=');
    expect(inlineData({ type: 'file', mimeType: 'text/plain', url: 'data:text/plain,h%c3%a9' })).toBe('aMOp');
    expect(inlineData({ type: 'file', mimeType: 'text/plain', url: 'data:text/plain,100%' })).toBeUndefined();
    expect(inlineData({ type: 'image', mimeType: 'image/png', url: 'https://example.com/a.png' })).toBeUndefined();
  });
});
