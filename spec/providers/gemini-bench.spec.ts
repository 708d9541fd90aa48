/**
 * P20: the bench's W6 measures Gemini with a wire the bench writes itself (bench/lib/w6-wire.js) and a server
 * that checks every request (bench/lib/w6-server.js). This spec runs the loop on that wire here, over the
 * specs' loopback server, so that what W6 measures is a conversation that works: the server's check — which
 * refuses a call sent back without its thought signature, as the API does — accepts every request
 * geminiProvider makes, the text and the tools' runs are what the bench counts, and each call's tool starts
 * before the reply's later bytes are read. (How fast is the bench's business, not a spec's.)
 */
import { lastValueFrom, toArray } from 'rxjs';
import { geminiProvider, runEventedToolLoop } from '../../src/index.js';
import type { LoopEvent } from '../../src/index.js';
import { LoopbackServer, Received } from './loopback-server';
import { W, check, startsAndText, w6Registry } from './w6-bench';

let server: LoopbackServer;
beforeAll(async () => {
  server = await LoopbackServer.start();
});
afterAll(() => server.stop());
beforeEach(() => server.reset());

const MODEL_PATH = /^\/v1beta\/models\/([^/:]+):streamGenerateContent\?alt=sse$/;

/** Answers as the bench's server does: the request checked (a 400 when it fails), the reply of its turn, one event a piece. */
function benchReply(request: Received) {
  const model = MODEL_PATH.exec(request.path)?.[1];
  const checked = check('gemini', request.json, model);
  if (checked.error !== undefined) return { status: 400, body: JSON.stringify({ error: { code: 400, message: `w6 server: ${checked.error}`, status: 'INVALID_ARGUMENT' } }) };
  return { body: W.reply('gemini', checked.scenario!, checked.turn!).map((event) => event.sse) };
}

describe('P20: the bench W6 wire of Gemini', () => {
  it("P20: a whole W6 conversation runs on the bench's Gemini wire, every request passing the bench server's check (thought signatures included); each tool starts before the text after its call", async () => {
    const scenario = W.SCENARIOS['w6-conversation']!;
    server.reply(...Array.from({ length: scenario.turns }, () => benchReply));
    const runs: { name: string; turn: number | undefined }[] = [];
    const registry = w6Registry(runs);
    const provider = geminiProvider({ model: scenario.name, baseURL: `${server.url}/v1beta`, apiKey: 'w6-bench-key', maxRetries: 0 });
    const events: LoopEvent[] = await lastValueFrom(runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'hi' }], maxTurns: 10 }).pipe(toArray()));

    expect(events.at(-1)).toMatchObject({ type: 'loop_end', reason: 'stop' });
    expect(server.requests.map((request) => check('gemini', request.json, MODEL_PATH.exec(request.path)?.[1]))).toEqual(
      Array.from({ length: scenario.turns }, (_, n) => expect.objectContaining({ turn: n + 1 })),
    );
    const text = events.flatMap((event) => (event.type === 'text_delta' ? [event.text] : [])).join('');
    expect(text.length).toBe(W.conversationChars(scenario));
    expect(runs).toEqual(Array.from({ length: scenario.turns - 1 }, (_, n) => [{ name: 'lookup', turn: n + 1 }, { name: 'write_file', turn: n + 1 }]).flat());
    // per tool turn: both tools started before the first token of the text that follows the calls
    expect(startsAndText(events, scenario)).toEqual(Array.from({ length: scenario.turns - 1 }, (_, n) => [`${n + 1}: start lookup`, `${n + 1}: start write_file`, `${n + 1}: text after the calls`]).flat());
  });

  it("P20: the bench server's check refuses a history whose call lost its thought signature, as the API does", () => {
    const tools = [{ functionDeclarations: [{ name: 'lookup' }, { name: 'write_file' }] }];
    const turn = (signature?: string) => ({
      tools,
      contents: [
        { role: 'user', parts: [{ text: 'hi' }] },
        { role: 'model', parts: [{ functionCall: { name: 'lookup', args: {} }, ...(signature !== undefined && { thoughtSignature: signature }) }, { functionCall: { name: 'write_file', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { output: 'x' } } }, { functionResponse: { name: 'write_file', response: { output: 'y' } } }] },
      ],
    });
    const signed = W.reply('gemini', W.SCENARIOS['w6-conversation']!, 1).find((event) => event.tag === 'a')!.sse;
    const signature = (JSON.parse(signed.slice('data: '.length)) as { candidates: { content: { parts: { thoughtSignature: string }[] } }[] }).candidates[0]!.content.parts[0]!.thoughtSignature;
    expect(check('gemini', turn(signature), 'w6-conversation')).toMatchObject({ turn: 2 });
    expect(check('gemini', turn(), 'w6-conversation').error).toMatch(/missing a thought_signature/);
  });
});
