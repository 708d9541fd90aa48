/**
 * L4, L5 over real HTTP: a loopback server (127.0.0.1, port 0) that fails the first provider with a 503, then
 * answers 429 with `retry-after-ms`; the providers are the real OpenAI Chat provider.
 */
import { lastValueFrom, toArray } from 'rxjs';
import { createLimiter, limited, openAIChatProvider, withFallback } from '../../src/index.js';
import type { Provider } from '../../src/index.js';
import { LoopbackServer, fixture } from '../providers/loopback-server';

let server: LoopbackServer;
beforeAll(async () => {
  server = await LoopbackServer.start();
});
afterEach(() => server.reset());
afterAll(() => server.stop());

const input = { messages: [{ role: 'user' as const, content: 'What time is it?' }], tools: [] };
const chat = (model: string, maxRetries = 0): Provider => openAIChatProvider({ baseURL: `${server.url}/v1`, apiKey: 'sk-test-limits-0001', model, maxRetries });
const collect = (events: ReturnType<Provider>) => lastValueFrom(events.pipe(toArray()));
const answer = { headers: { 'content-type': 'text/event-stream' }, body: fixture('openai/text.sse') };
const unavailable = { status: 503, body: JSON.stringify({ error: { message: 'The engine is currently overloaded' } }) };
const limitedFor = (ms: number) => ({ status: 429, headers: { 'retry-after-ms': String(ms) }, body: JSON.stringify({ error: { message: 'Rate limit reached' } }) });

/** Replies that note when each request came. */
function timed(arrivals: number[], ...replies: object[]) {
  return replies.map((reply) => () => (arrivals.push(Date.now()), reply));
}

describe('limits over HTTP (L4, L5)', () => {
  it('L5, L1: a 503 from the first model fails over to the second in the same call: one message_start, its answer, its model named', async () => {
    server.reply(unavailable, answer);
    const events = await collect(withFallback([chat('gpt-primary'), chat('gpt-backup')])(input));
    expect(server.requests.map((request) => request.json.model)).toEqual(['gpt-primary', 'gpt-backup']);
    expect(events.filter((event) => event.type === 'message_start')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'text_delta').map((event) => event.text).join('')).toBe('Hello! 现在是北京时间中午 🕛。');
    expect(events.at(-1)).toEqual({ type: 'message_end', stopReason: 'stop', usage: { inputTokens: 61, outputTokens: 18, cacheReadTokens: 0 }, model: 'gpt-backup' });
  });

  it("L4: retries stay in the provider: the first model's own retries come first, and withFallback sees only its final failure", async () => {
    server.reply({ ...unavailable, headers: { 'retry-after-ms': '0' } }, unavailable, answer);
    const events = await collect(withFallback([chat('gpt-primary', 1), chat('gpt-backup')])(input));
    expect(server.requests.map((request) => request.json.model)).toEqual(['gpt-primary', 'gpt-primary', 'gpt-backup']);
    expect(events.at(-1)).toMatchObject({ stopReason: 'stop', model: 'gpt-backup' });
  });

  it('L1: a 401 is no reason to fail over: the reply is the error, with its failure', async () => {
    server.reply({ status: 401, body: JSON.stringify({ error: { message: 'Incorrect API key' } }) });
    const events = await collect(withFallback([chat('gpt-primary'), chat('gpt-backup')])(input));
    expect(server.requests).toHaveLength(1);
    const message = `HTTP 401 from POST ${server.url}/v1/chat/completions: Incorrect API key`;
    expect(events).toEqual([{ type: 'message_start' }, { type: 'message_end', stopReason: 'error', errorMessage: message, failure: { kind: 'http', status: 401, message }, model: 'gpt-primary' }]);
  });

  it("L4, L2: on one server, the provider's own retry waits the 429's retry-after, and a 429 it gives up on pauses the whole limiter that long", async () => {
    const arrivals: number[] = [];
    server.reply(...timed(arrivals, limitedFor(200), answer, limitedFor(200), answer));
    const limiter = createLimiter({ maxConcurrent: 4 });
    // one call whose provider retries once: it waits the retry-after itself, and the limiter sees only its answer
    const retried = await collect(limited(chat('gpt-retries', 1), limiter)(input));
    expect(retried.at(-1)).toMatchObject({ stopReason: 'stop' });
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(195);
    expect(limiter.state.pausedUntil).toBeUndefined();
    // one that does not retry: its final 429 pauses the limiter, and the next call, with slots free, waits as long
    const failed = await collect(limited(chat('gpt-gives-up'), limiter)(input));
    expect(failed.at(-1)).toMatchObject({ stopReason: 'error', failure: { kind: 'http', status: 429, retryAfterMs: 200 } });
    expect(limiter.state).toMatchObject({ waiting: 0, running: 0, pausedUntil: expect.any(Number) });
    const next = await collect(limited(chat('gpt-next'), limiter)(input));
    expect(next.at(-1)).toMatchObject({ stopReason: 'stop' });
    expect(arrivals[3]! - arrivals[2]!).toBeGreaterThanOrEqual(195);
    expect(server.requests.map((request) => request.json.model)).toEqual(['gpt-retries', 'gpt-retries', 'gpt-gives-up', 'gpt-next']);
  });

  it('L2: unsubscribing a call that waits for the limiter sends no request', async () => {
    server.reply({ ...answer, hold: () => new Promise((resolve) => setTimeout(resolve, 50)) });
    const limiter = createLimiter({ maxConcurrent: 1 });
    const first = collect(limited(chat('gpt-first'), limiter)(input));
    const waiting = limited(chat('gpt-never'), limiter)(input).subscribe();
    expect(limiter.state).toMatchObject({ waiting: 1, running: 1 });
    waiting.unsubscribe();
    expect(limiter.state).toMatchObject({ waiting: 0, running: 1 });
    await first;
    expect(server.requests.map((request) => request.json.model)).toEqual(['gpt-first']);
  });
});

