/**
 * P16: the bench's W6 measures the Responses API with a wire the bench writes itself (bench/lib/w6-wire.js)
 * and a server that checks every request (bench/lib/w6-server.js). This spec runs the loop on that wire here,
 * over the specs' loopback server, so that what W6 measures is a conversation that works: the server's check
 * accepts every request the provider makes, the text and the tools' runs are what the bench counts, and each
 * call's tool starts before the reply's later bytes are read. (How fast is the bench's business, not a spec's.)
 */
import { lastValueFrom, toArray } from 'rxjs';
import { openAIResponsesProvider, runEventedToolLoop } from '../../src/index.js';
import type { LoopEvent } from '../../src/index.js';
import { LoopbackServer, Received } from './loopback-server';
import { W, check, startsAndText, w6Registry } from './w6-bench';

let server: LoopbackServer;
beforeAll(async () => {
  server = await LoopbackServer.start();
});
afterAll(() => server.stop());
beforeEach(() => server.reset());

/** Answers as the bench's server does: the request checked (a 400 when it fails), the reply of its turn, one event a piece. */
function benchReply(request: Received) {
  const checked = check('responses', request.json);
  if (checked.error !== undefined) return { status: 400, body: JSON.stringify({ error: { message: `w6 server: ${checked.error}` } }) };
  return { body: W.reply('responses', checked.scenario!, checked.turn!).map((event) => event.sse) };
}

describe('P16: the bench W6 wire of the Responses API', () => {
  it("P16: a whole W6 conversation runs on the bench's Responses wire, every request passing the bench server's check; each tool starts before the text after its call", async () => {
    const scenario = W.SCENARIOS['w6-conversation']!;
    server.reply(...Array.from({ length: scenario.turns }, () => benchReply));
    const runs: { name: string; turn: number | undefined }[] = [];
    const registry = w6Registry(runs);
    const provider = openAIResponsesProvider({ model: scenario.name, baseURL: `${server.url}/v1`, apiKey: 'w6-bench-key', maxRetries: 0, include: [] });
    const events: LoopEvent[] = await lastValueFrom(runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'hi' }], maxTurns: 10 }).pipe(toArray()));

    expect(events.at(-1)).toMatchObject({ type: 'loop_end', reason: 'stop' });
    expect(server.requests.map((request) => check('responses', request.json).error ?? `turn ${check('responses', request.json).turn}`)).toEqual(
      Array.from({ length: scenario.turns }, (_, n) => `turn ${n + 1}`),
    );
    const text = events.flatMap((event) => (event.type === 'text_delta' ? [event.text] : [])).join('');
    expect(text.length).toBe(W.conversationChars(scenario));
    expect(runs).toEqual(Array.from({ length: scenario.turns - 1 }, (_, n) => [{ name: 'lookup', turn: n + 1 }, { name: 'write_file', turn: n + 1 }]).flat());
    // per tool turn: both tools started before the first token of the text that follows the calls
    expect(startsAndText(events, scenario)).toEqual(Array.from({ length: scenario.turns - 1 }, (_, n) => [`${n + 1}: start lookup`, `${n + 1}: start write_file`, `${n + 1}: text after the calls`]).flat());
  });

  it("P16: the bench server's check refuses a request that is not stateless", () => {
    const request = { model: 'w6-conversation', stream: true, store: true, input: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', name: 'lookup' }, { type: 'function', name: 'write_file' }] };
    expect(check('responses', request).error).toBe('not a stateless request (store: false, no previous_response_id)');
    expect(check('responses', { ...request, store: false }).error).toBeUndefined();
  });
});
