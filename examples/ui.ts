/**
 * U7, a chat page on a loop: a node:http server on 127.0.0.1 whose page is RxJS — `fromSse(...).pipe(toViewModel())`
 * rendering the view model (examples/ui/page.ts, bundled with esbuild from the package's own source) — with a
 * prompt box, the streamed text, the tool calls and their state, and a stop button that aborts the request (the
 * server's loop is unsubscribed, its tool cancelled).
 *
 *   npm run ui                                              (s04's scripted model, paced like a real one)
 *   npm run ui -- --provider openai --model gpt-4o-mini     (a real model: the s04 flags, as examples/s04.ts takes them)
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import { Observable, concatMap, delay, from, of } from 'rxjs';
import { AgentMessage, Provider, ProviderEvent, ToolRegistry, runEventedToolLoop } from '../src/index.js';
import { writeSse } from '../src/ui/index.js';
import { FIXED_NOW, lastToolResult, providerFromArgs } from './series-demo.js';

const root = join(__dirname, '..');

/** s04's model, scripted: it asks for `current_time`, then answers from the result, a word every 40 ms. */
export const scriptedModel: Provider = (input) => {
  const answered = input.messages.at(-1)?.role === 'toolResult';
  const events: ProviderEvent[] = answered
    ? [{ type: 'message_start' }, ...`The tool says it is ${lastToolResult(input)}.`.split(/(?<= )/).map((text): ProviderEvent => ({ type: 'text_delta', text })), { type: 'message_end', stopReason: 'stop' }]
    : [{ type: 'message_start' }, { type: 'tool_call', call: { id: `call_${input.messages.length}`, name: 'current_time', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }];
  return from(events).pipe(concatMap((event) => of(event).pipe(delay(40))));
};

/** s04's tool, slow enough (a second) to press stop while it runs. */
export function demoTools(): ToolRegistry {
  return new ToolRegistry().register({
    name: 'current_time',
    description: 'Returns the current time as an ISO 8601 string',
    input: {},
    handler: () => new Observable<string>((subscriber) => {
      const timer = setTimeout(() => {
        subscriber.next(FIXED_NOW);
        subscriber.complete();
      }, 1_000);
      return () => clearTimeout(timer);
    }),
  });
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>rx-tool-loop chat</title>
<link rel="icon" href="data:,">
<style>
  body { font: 15px/1.5 system-ui, sans-serif; max-width: 42rem; margin: 2rem auto; padding: 0 1rem; }
  .user { font-weight: 600; margin-bottom: .25rem; }
  .tools { list-style: none; padding: 0; margin: 0; color: #555; font-size: 13px; }
  .tools li[data-state="running"]::before { content: "⏳ "; }
  .tools li[data-state="done"]::before { content: "✓ "; }
  .tools li[data-state="queued"]::before { content: "… "; }
  form { display: flex; gap: .5rem; margin-top: 1rem; }
  #prompt { flex: 1; padding: .4rem; }
  #status { color: #777; font-size: 13px; }
</style>
</head>
<body>
<h1>rx-tool-loop chat</h1>
<div id="log"></div>
<form id="prompt-form"><input id="prompt" placeholder="Ask what time it is" autocomplete="off" autofocus><button id="send">Send</button><button id="stop" type="button" disabled>Stop</button></form>
<p id="status"></p>
<script src="/page.js"></script>
</body>
</html>`;

/** The page's script: examples/ui/page.ts with the package's entries from src/, for a browser. */
async function bundlePage(): Promise<string> {
  const result = await build({
    entryPoints: [join(__dirname, 'ui', 'page.ts')],
    bundle: true,
    write: false,
    format: 'iife',
    target: 'es2022',
    platform: 'browser',
    alias: { 'rx-tool-loop': join(root, 'src', 'index.ts'), 'rx-tool-loop/ui': join(root, 'src', 'ui', 'index.ts') },
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

export interface UiServer {
  url: string;
  close(): Promise<void>;
}

/** Starts the chat on 127.0.0.1 (`port` 0: any free port). */
export async function startUi(options: { provider?: Provider; registry?: () => ToolRegistry; port?: number } = {}): Promise<UiServer> {
  const provider = options.provider ?? scriptedModel;
  const registry = options.registry ?? demoTools;
  const script = await bundlePage();
  const server = createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/') return send(response, 'text/html; charset=utf-8', PAGE);
    if (request.method === 'GET' && request.url === '/page.js') return send(response, 'text/javascript; charset=utf-8', script);
    if (request.method === 'POST' && request.url === '/chat') return chat(request, response);
    response.writeHead(404).end();
  });

  function chat(request: IncomingMessage, response: ServerResponse): void {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      try {
        const { messages } = JSON.parse(body) as { messages: AgentMessage[] };
        // the loop checks the history itself (R21) and throws at call time on a bad one
        writeSse(response, runEventedToolLoop({ provider, registry: registry(), messages }));
      } catch (error) {
        if (!response.headersSent) send(response, 'text/plain; charset=utf-8', error instanceof Error ? error.message : String(error), 400);
      }
    });
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(response: ServerResponse, type: string, text: string, status = 200): void {
  response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }).end(text);
}

if (require.main === module) {
  const provider = providerFromArgs('ui', process.argv.slice(2), scriptedModel);
  if (provider !== undefined) {
    startUi({ provider }).then(
      ({ url }) => console.log(`rx-tool-loop chat: ${url}  (Ctrl-C to stop)`),
      (error: unknown) => {
        console.error(error instanceof Error ? error.message : error);
        process.exitCode = 1;
      },
    );
  }
}
