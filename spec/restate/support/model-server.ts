import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One model call as the server saw it: whose conversation, and which turn of its prompt (0 = the first). */
export interface ModelCall {
  conversation: string;
  prompt: string;
  turn: number;
  /** When the call came (ms since the epoch): D7 times a failover by the first progress after a kill. */
  at: number;
}

interface ChatMessage {
  role: string;
  content?: string | null;
  tool_calls?: unknown[];
}

/**
 * A model of the spec's own: an OpenAI Chat Completions streaming server on 127.0.0.1 that plays a plan
 * written in the prompt. A prompt `TAG: fast,slow` asks for the tool `fast`, then `slow` (one call a turn,
 * input `{ n }`; `fast+slow` calls both in one turn), then answers `done TAG: RESULTS` in three text deltas. `TAG: PLAN | N`
 * (D9) has every reply stream N words more, one text delta each (before a turn's calls, after the answer), as a
 * model that talks streams tokens. It counts every call (header
 * `x-conversation` names whose it is), so a spec sees which model calls a restart repeated.
 */
export class ModelServer {
  readonly calls: ModelCall[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<ModelServer> {
    const server = createServer();
    const model = new ModelServer(server);
    server.on('request', (request, response) => void model.answer(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return model;
  }

  /** `http://127.0.0.1:PORT/v1`, the `baseURL` of `openAIChatProvider`. */
  get baseURL(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** The calls made for `conversation`, as `turn` numbers in call order. */
  turnsOf(conversation: string): number[] {
    return this.calls.filter((call) => call.conversation === conversation).map((call) => call.turn);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const pieces: Buffer[] = [];
    for await (const piece of request) pieces.push(piece as Buffer);
    const { messages } = JSON.parse(Buffer.concat(pieces).toString('utf8')) as { messages: ChatMessage[] };
    const last = messages.map((message) => message.role).lastIndexOf('user');
    const prompt = String(messages[last]?.content ?? '');
    const since = messages.slice(last + 1);
    const turn = since.filter((message) => message.role === 'assistant').length;
    this.calls.push({ conversation: String(request.headers['x-conversation'] ?? ''), prompt, turn, at: Date.now() });
    const [tag = '', spoken = ''] = prompt.split(':').map((part) => part.trim());
    const [plan = '', count = '0'] = spoken.split('|').map((part) => part.trim());
    const steps = plan === '' ? [] : plan.split(',');
    const chunks: unknown[] = [];
    const words = Array.from({ length: Number(count) }, (_, index) => ({ choices: [{ index: 0, delta: { content: ` w${index + 1}` } }] }));
    const step = steps[turn];
    if (step !== undefined) {
      chunks.push(...words);
      // `a+b`: both tools called in one turn (ids TAG-TURN-I, inputs TURN.I); a lone tool: id TAG-TURN, input TURN
      const names = step.split('+');
      const calls = names.map((name, index) => {
        const [id, n] = names.length === 1 ? [`${tag}-${turn}`, String(turn)] : [`${tag}-${turn}-${index}`, `${turn}.${index}`];
        return { index, id, type: 'function', function: { name, arguments: JSON.stringify({ n }) } };
      });
      for (const call of calls) chunks.push({ choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [call] } }] });
      chunks.push({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });
    } else {
      const results = since.filter((message) => message.role === 'tool').map((message) => message.content).join(' + ');
      for (const text of ['done ', `${tag}: `, results]) chunks.push({ choices: [{ index: 0, delta: { content: text } }] });
      chunks.push(...words);
      chunks.push({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const chunk of chunks) response.write(`data: ${JSON.stringify(chunk)}\n\n`);
    response.end('data: [DONE]\n\n');
  }
}
