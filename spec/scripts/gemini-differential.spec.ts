/**
 * P21: check-streams holds geminiProvider side by side with the official `@google/genai` on Gemini streams —
 * here streams written from the API reference in the exact wire format (the recordings stay outside the
 * repository): the two agree on text, thoughts, calls, signatures, usage and finish reason; a difference in
 * any of them is found; a stream the SDK cannot read is listed, not compared.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkStreams } from '../../scripts/check-streams';
import { GeminiSummary, sdkDifferences } from '../../scripts/gemini-differential';

const header = '# source: written for spec/scripts/gemini-differential.spec.ts\n# commit: none\n# note: a reply in the exact wire format\n';
/** One event as Gemini frames it: a `data:` line, CRLF CRLF. */
const data = (chunk: object): string => `data: ${JSON.stringify(chunk)}\r\n\r\n`;
const candidate = (parts: object[], more: object = {}) => ({ candidates: [{ content: { role: 'model', parts }, index: 0, ...more }], modelVersion: 'gemini-3-flash-preview' });

/** Thoughts, signed text, a signed call with its id, a usage with every count. */
const signedStream = [
  data(candidate([{ text: 'The user wants Paris.', thought: true }])),
  data(candidate([{ text: 'Je regarde ' }])),
  data(candidate([{ text: 'à Paris ☀️', thoughtSignature: 'c2lnLXRleHQ=' }])),
  data(candidate([{ functionCall: { id: 'fc_1', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnLWNhbGw=' }])),
  data({
    ...candidate([{ text: '' }], { finishReason: 'STOP' }),
    usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 12, toolUsePromptTokenCount: 3, thoughtsTokenCount: 20, cachedContentTokenCount: 8, totalTokenCount: 75 },
  }),
].join('');

/** Vertex: a call whose arguments stream (partialArgs, willContinue), closed by an empty functionCall. */
const streamedStream = [
  data(candidate([{ functionCall: { name: 'get_weather', willContinue: true }, thoughtSignature: 'c2lnLXN0cmVhbQ==' }])),
  data(candidate([{ functionCall: { partialArgs: [{ jsonPath: '$.city', stringValue: 'Tok', willContinue: true }], willContinue: true } }])),
  data(candidate([{ functionCall: { partialArgs: [{ jsonPath: '$.city', stringValue: 'yo' }], willContinue: true } }])),
  data({ ...candidate([{ functionCall: {} }], { finishReason: 'STOP' }), usageMetadata: { promptTokenCount: 26, candidatesTokenCount: 9, totalTokenCount: 35 } }),
].join('');

/** A JSON error after the text, not on a data: line: the SDK throws; an SSE reader skips the lines. */
const unreadable = data(candidate([{ text: 'First ' }], { finishReason: 'STOP' })) + '{\n  "error": {\n    "code": 499,\n    "status": "CANCELLED"\n  }\n}\n';

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'check-streams-gemini-'));
  mkdirSync(join(folder, 'gemini'));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

describe('P21: check-streams holds geminiProvider beside @google/genai', () => {
  it('P21: on Gemini streams (Developer API and Vertex) the provider and the official SDK agree on text, thoughts, calls, signatures, usage and finish reason; a stream the SDK cannot read is listed, not compared', async () => {
    writeFileSync(join(folder, 'gemini', 'signed.sse'), header + signedStream);
    writeFileSync(join(folder, 'gemini', 'vertex-streamed.sse'), header + streamedStream);
    writeFileSync(join(folder, 'gemini', 'vertex-unreadable.sse'), header + unreadable);
    const lines: string[] = [];
    const { results, exitCode } = await checkStreams(folder, { pieceSizes: [7], write: (line) => lines.push(line) });

    expect(results.map((r) => [r.file, r.sdk])).toEqual([
      ['gemini/signed.sse', { differences: [] }],
      ['gemini/vertex-streamed.sse', { differences: [] }],
      ['gemini/vertex-unreadable.sse', { thrown: expect.any(String) }],
    ]);
    const [signed, streamed] = results;
    expect(signed!.outcome).toMatchObject({
      stopReason: 'toolUse',
      text: 'Je regarde à Paris ☀️',
      reasoningText: 'The user wants Paris.',
      calls: [{ id: 'fc_1', name: 'get_weather', input: { city: 'Paris' } }],
      usage: { inputTokens: 43, outputTokens: 32, cacheReadTokens: 8 },
    });
    expect(streamed!.outcome.calls).toEqual([{ id: expect.any(String), name: 'get_weather', input: { city: 'Tokyo' } }]);
    expect(results.every((r) => r.disagreements.length === 0 && r.protocolErrors.length === 0)).toBe(true);
    expect(exitCode).toBe(0);
    expect(lines.find((line) => line.startsWith('gemini/signed.sse'))).toMatch(/pieces agree {2}the SDK agrees$/);
    expect(lines.at(-1)).toBe('the official SDK (P21): 2 of 2 agree; disagree: none; the SDK threw (listed, not compared): 1: gemini/vertex-unreadable.sse');
  }, 60_000);

  it('P21: a difference in any of text, thoughts, calls, ids, arguments, signatures, usage or finish reason is found', () => {
    const sdk: GeminiSummary = {
      text: 'Hi',
      thoughts: 'hmm',
      calls: [{ name: 'f', args: { a: 1 }, id: 'fc_1' }, { name: 'g' }],
      signatures: ['s1', 's2'],
      usage: { inputTokens: 1, outputTokens: 2 },
      stopReason: 'toolUse',
    };
    const ours: GeminiSummary = { ...sdk, calls: [{ name: 'f', args: { a: 1 }, id: 'fc_1' }, { name: 'g', args: { b: 2 }, id: 'call_made_1' }] };
    expect(sdkDifferences(ours, sdk)).toEqual([]); // a streamed call (no args from the SDK) and a made-up id are no difference
    const changed: [string, Partial<GeminiSummary>][] = [
      ['text', { text: 'Hi!' }],
      ['thoughts', { thoughts: '' }],
      ['calls', { calls: [ours.calls[0]!] }],
      ['call 0: arguments', { calls: [{ name: 'f', args: { a: 2 }, id: 'fc_1' }, ours.calls[1]!] }],
      ['call 0: id', { calls: [{ name: 'f', args: { a: 1 }, id: 'call_x' }, ours.calls[1]!] }],
      ['call 1: h', { calls: [ours.calls[0]!, { name: 'h' }] }],
      ['signatures', { signatures: ['s2', 's1'] }],
      ['usage', { usage: { inputTokens: 1, outputTokens: 3 } }],
      ['stop reason', { stopReason: 'stop' }],
    ];
    for (const [what, change] of changed) expect([what, sdkDifferences({ ...ours, ...change }, sdk)]).toEqual([what, [expect.stringContaining(what)]]);
  });
});
