/**
 * F4: attachments are kept everywhere a run goes — describeEvent's lines, the view model, the recorder (a letter per
 * result, the legend naming them, and a replay that gives them back), traces (counts; the bytes only with
 * recordContent) and sessions (JSONL, inline base64, a round trip).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, of, toArray } from 'rxjs';
import { type Attachment, type ConversationEvent, type UserMessage, ToolRegistry, conversation, runEventedToolLoop, scriptedProvider, toViewModel } from 'rx-tool-loop';
import { describeEvent, marbleProvider, marbleTools, start, text, end, call } from 'rx-tool-loop/testing';
import { traceLoop } from 'rx-tool-loop/otel';
import { SessionTree, jsonlStore, persist } from 'rx-tool-loop/sessions';
import { recorded, replay } from '../testing/support/replay.js';
import { memoryTracer, spanNamed } from '../otel/memory-tracer.js';
import { answerTurn, only, tool, toolTurn } from '../support/events.js';

const png: Attachment = { type: 'image', mimeType: 'image/png', data: Buffer.alloc(1234, 9).toString('base64'), name: 'chart.png' };
const pdf: Attachment = { type: 'file', mimeType: 'application/pdf', url: 'https://example.com/q3.pdf' };
const chartTool = () => tool('chart', () => ({ content: 'drawn', attachments: [png] }));
const run = (registry = new ToolRegistry().register(chartTool())) =>
  runEventedToolLoop({ provider: scriptedProvider([toolTurn(call('chart')), answerTurn('A rising line.')]), registry, messages: [{ role: 'user', content: 'draw', attachments: [pdf] }] });

describe('F4: attachments kept everywhere', () => {
  it('F4: describeEvent names each attachment, never its bytes: [image image/png, 1234 bytes]', async () => {
    const events = await lastValueFrom(run().pipe(toArray()));
    expect(describeEvent(only(events, 'tool_result')[0]!)).toBe('tool_result chart: drawn [image image/png, 1234 bytes]');
    const prompt: ConversationEvent = { type: 'user_message', message: { role: 'user', content: 'see', attachments: [pdf, png] }, messages: [] };
    expect(describeEvent(prompt)).toBe('user_message see [file application/pdf, https://example.com/q3.pdf] [image image/png, 1234 bytes]');
    // a result without attachments reads as before
    expect(describeEvent({ type: 'tool_result', message: { role: 'toolResult', toolCallId: 'c', toolName: 'x', content: 'ok', isError: false }, messages: [] })).toBe('tool_result x: ok');
  });

  it("F4: the view model's ToolView carries a settled result's attachments", async () => {
    const events = await lastValueFrom(run().pipe(toArray()));
    const models = await lastValueFrom(of(...events).pipe(toViewModel(), toArray()));
    const atResult = models[events.findIndex((e) => e.type === 'tool_result')]!;
    expect(atResult.tools).toEqual([{ id: 'chart', name: 'chart', state: 'done', attachments: [png] }]);
    expect(atResult.messages.at(-1)).toMatchObject({ role: 'toolResult', attachments: [png] });
  });

  it('F4, T9: the recorder gives each result with attachments a letter whose legend names them, and the test it writes replays them', () => {
    const other: Attachment = { ...png, data: Buffer.alloc(10).toString('base64') };
    const { diagram, values, test } = recorded((helpers) =>
      runEventedToolLoop({
        provider: marbleProvider(
          helpers.cold('-s-a-b-u|', { s: start, a: call('chart', {}, 'c1'), b: call('chart', {}, 'c2'), u: end('toolUse') }),
          helpers.cold('-s-t-e|', { s: start, t: text('Two charts.'), e: end('stop') }),
        ),
        registry: marbleTools({ chart: (input, context) => helpers.cold('--(R|)', { R: { content: 'drawn', attachments: [context.call.id === 'c1' ? png : other] } }) }),
        messages: [{ role: 'user', content: 'draw two', attachments: [pdf] }],
      }),
    );
    const results = Object.entries(values).filter(([, line]) => line.startsWith('tool_result'));
    expect(results.map(([, line]) => line).sort()).toEqual(['tool_result chart: drawn [image image/png, 10 bytes]', 'tool_result chart: drawn [image image/png, 1234 bytes]']);
    expect(new Set(results.map(([letter]) => letter)).size).toBe(2); // a letter each
    for (const [letter] of results) expect(diagram).toContain(letter);
    expect(test).toContain('"attachments"');
    replay(test);
  });

  it('F1: a conversation fails on a prompt whose attachments are invalid, naming the attachment', async () => {
    const bad = { role: 'user', content: 'look', attachments: [{ type: 'image', mimeType: 'image/png' }] } as UserMessage;
    await expect(lastValueFrom(of(bad).pipe(conversation({ provider: scriptedProvider([]), registry: new ToolRegistry() })))).rejects.toThrow(
      new TypeError("conversation: a prompt's attachments[0] must have exactly one of data (base64) and url"),
    );
  });

  it('F4, T9: a conversation prompt with attachments replays with them', () => {
    const { values, test } = recorded((helpers) =>
      helpers.cold<UserMessage>('a|', { a: { role: 'user', content: 'look', attachments: [png] } }).pipe(
        conversation({ provider: marbleProvider(helpers.cold('-s-t-e|', { s: start, t: text('A chart.'), e: end('stop') })), registry: new ToolRegistry() }),
      ),
    );
    expect(Object.values(values)).toContain('user_message look [image image/png, 1234 bytes]');
    replay(test);
  });

  it('F4: traces count the attachments of a result, and record their bytes only with recordContent', async () => {
    const plain = memoryTracer();
    await lastValueFrom(run().pipe(traceLoop({ tracer: plain.tracer }), toArray()));
    const tool = spanNamed(plain.finished(), 'execute_tool chart');
    expect(tool.attributes['rx_tool_loop.tool.attachments']).toBe(1);
    const everything = JSON.stringify(plain.finished().map((span) => span.attributes));
    expect(everything).not.toContain(png.data!.slice(0, 40));

    const content = memoryTracer();
    await lastValueFrom(run().pipe(traceLoop({ tracer: content.tracer, recordContent: true }), toArray()));
    const second = spanNamed(content.finished(), 'chat', 1);
    const input = JSON.parse(second.attributes['gen_ai.input.messages'] as string) as { role: string; parts: { type: string }[] }[];
    expect(input[0]!.parts).toEqual([{ type: 'text', content: 'draw' }, { type: 'uri', modality: 'file', mime_type: 'application/pdf', uri: 'https://example.com/q3.pdf' }]);
    expect(input[2]!.parts).toEqual([{ type: 'tool_call_response', id: 'chart', response: 'drawn' }, { type: 'blob', modality: 'image', mime_type: 'image/png', content: png.data }]);
  });

  it('F4, S1: a session keeps attachments in its JSONL file as inline base64, and a reload gives the same history', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'rx-tool-loop-attachments-'));
    try {
      const path = join(folder, 'session.jsonl');
      const tree = await lastValueFrom(SessionTree.load(jsonlStore(path)));
      const registry = new ToolRegistry().register(chartTool());
      const provider = scriptedProvider([toolTurn(call('chart')), answerTurn('A rising line.')]);
      const prompt: UserMessage = { role: 'user', content: 'draw', attachments: [pdf] };
      const events = await lastValueFrom(of(prompt).pipe(conversation({ provider, registry, messages: tree.context() }), persist(tree, jsonlStore(path)), toArray()));
      const end = only(events, 'loop_end')[0]!;
      expect(readFileSync(path, 'utf8')).toContain(`"data":"${png.data!}"`);
      const reloaded = await lastValueFrom(SessionTree.load(jsonlStore(path)));
      expect(reloaded.context()).toEqual(end.messages);
      expect(reloaded.context().filter((m) => 'attachments' in m)).toHaveLength(2);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
