/**
 * What the series' demos share (s04, s05, the chat): the provider chosen from the command line — the
 * scripted one by default, a real API with `--provider` (and, for OpenAI, `--api chat|responses|ai-sdk`) — and the transcript: the question, one line per
 * event, the final answer and the shape of the history.
 */
import { parseArgs } from 'node:util';
import { Observable, defer, lastValueFrom, switchMap, tap } from 'rxjs';
import { AgentMessage, LoopEvent, Provider, ProviderInput, anthropicProvider, geminiProvider, openAIChatProvider, openAIResponsesProvider } from '../src/index.js';
import { languageModelProvider } from '../src/ai-sdk/index.js';

/** What the demos' `current_time` tool answers, so that a transcript on the scripted provider never changes. */
export const FIXED_NOW = '2026-01-01T00:00:00Z';

export interface SeriesDemo {
  /** `s04`, `s05`: the npm script, and the prefix of its error lines. */
  name: string;
  title: string;
  question: string;
  /** The provider that runs without network or keys. */
  scripted: Provider;
  /** The loop, on the chosen provider. */
  run(provider: Provider, messages: AgentMessage[]): Observable<LoopEvent>;
  /** The transcript's line for an event, if it has one. */
  describe(event: LoopEvent): string | undefined;
}

/** The content of the last tool result the model was sent: what the scripted model answers from. */
export function lastToolResult({ messages }: ProviderInput): string {
  const result = messages.findLast((message) => message.role === 'toolResult');
  return result?.content ?? '(no tool result)';
}

/** The transcript lines that every demo prints the same way. */
export function describeCommon(event: LoopEvent): string | undefined {
  switch (event.type) {
    case 'message_start':
      return 'message_start';
    case 'text_delta':
      return `text_delta: ${event.text}`;
    case 'message_end':
      return `message_end: ${event.stopReason}`;
    default:
      return undefined;
  }
}

/** Runs a demo from `process.argv`; a bad flag or a failed model call sets a failing exit code. */
export function runSeriesDemo(demo: SeriesDemo): void {
  main(demo).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}

async function main({ name, title, question, scripted, run, describe }: SeriesDemo): Promise<void> {
  const provider = providerFromArgs(name, process.argv.slice(2), scripted);
  if (provider === undefined) return;
  console.log(`${name}: ${title}\n`);
  console.log(`[user]\n${question}\n`);

  const end = await lastValueFrom(
    run(provider, [{ role: 'user', content: question }]).pipe(
      tap((event) => {
        const line = describe(event);
        if (line !== undefined) console.log(line);
      }),
    ),
  );
  if (end.type !== 'loop_end') throw new Error(`the loop ended with ${end.type}`);
  // a provider failure (an unreachable endpoint, a rejected key): one line on stderr, and a failing exit code
  if (end.reason === 'error') throw new Error(`${name}: ${end.assistant.errorMessage ?? 'the model call failed'}`);

  console.log(`\n[assistant]\ncontent: ${end.assistant.content}\nstopReason: ${end.assistant.stopReason}\n`);
  console.log(`[state]\n${end.messages.map((message) => message.role).join(' -> ')}`);
}

/**
 * The provider that the flags of `npm run NAME -- …` choose, or `undefined` once a bad flag has been
 * reported on stderr with the usage line (exit code 2).
 */
export function providerFromArgs(name: string, args: string[], scripted: Provider): Provider | undefined {
  try {
    return chooseProvider(args, scripted);
  } catch (error) {
    const usage = `usage: npm run ${name} [-- --provider openai|anthropic|gemini [--api chat|responses|ai-sdk] --model MODEL [--base-url URL]]`;
    console.error(`${name}: ${error instanceof Error ? error.message : String(error)}\n${usage}`);
    process.exitCode = 2;
    return undefined;
  }
}

/**
 * No flags: the scripted provider. `--provider openai|anthropic|gemini --model M [--base-url URL]`: a real API;
 * OpenAI's through `--api chat` (Chat Completions, the default), `--api responses` (the Responses API) or
 * `--api ai-sdk` (Chat Completions through the AI SDK's `@ai-sdk/openai` and `languageModelProvider`, P18);
 * `--api` alone also chooses OpenAI.
 */
function chooseProvider(args: string[], scripted: Provider): Provider {
  const { values } = parseArgs({
    args,
    options: { provider: { type: 'string' }, api: { type: 'string' }, model: { type: 'string' }, 'base-url': { type: 'string' } },
    strict: true,
  });
  const { api, model, 'base-url': baseURL } = values;
  const name = values.provider ?? (api === undefined ? 'scripted' : 'openai');
  if (name === 'scripted') return scripted;
  if (name !== 'openai' && name !== 'anthropic' && name !== 'gemini') throw new Error(`unknown provider: ${name}`);
  if (api !== undefined && api !== 'chat' && api !== 'responses' && api !== 'ai-sdk') throw new Error(`unknown api: ${api} (chat, responses or ai-sdk)`);
  if (api !== undefined && name !== 'openai') throw new Error(`--api is for --provider openai`);
  if (model === undefined) throw new Error(api === 'responses' || api === 'ai-sdk' ? `--api ${api} needs --model` : `--provider ${name} needs --model`);
  if (name === 'anthropic') return anthropicProvider({ model, baseURL });
  if (api === 'ai-sdk') return aiSdkOpenAI(model, baseURL);
  if (name === 'gemini') return geminiProvider({ model, baseURL });
  return api === 'responses' ? openAIResponsesProvider({ model, baseURL }) : openAIChatProvider({ model, baseURL });
}

/**
 * `@ai-sdk/openai`'s Chat Completions model (the key from OPENAI_API_KEY, as the AI SDK reads it) as a provider.
 * The package is an ES module only: it is imported when a call is made, so the other demos never load it.
 */
function aiSdkOpenAI(model: string, baseURL: string | undefined): Provider {
  const provider = defer(async () => {
    const { createOpenAI } = await import('@ai-sdk/openai');
    return languageModelProvider(createOpenAI(baseURL === undefined ? {} : { baseURL }).chat(model));
  });
  return (input) => provider.pipe(switchMap((made) => made(input)));
}
