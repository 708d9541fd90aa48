/**
 * A Node CLI: streams the model's text to stdout as it arrives and shows a live status line while
 * tools run. On the scripted provider by default (a slow tool with progress, so that there is
 * something to see):
 *
 *   npx ts-node examples/cli.ts
 */
import { Observable, lastValueFrom, tap } from 'rxjs';
import type { LoopEvent, Provider, ProviderInput } from '../src/index.js';
import { ToolRegistry, runEventedToolLoop, scriptedProvider } from '../src/index.js';

/** Where the CLI writes: `process.stdout`, or anything with a `write`. */
export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

export function renderer(out: Output): (event: LoopEvent) => void {
  const running = new Map<string, string>(); // call id -> status text
  let status = '';
  const showStatus = () => {
    const next = [...running.values()].join(' | ');
    // `\r` and clear-to-end rewrite the status line in place; the text stream goes above it
    if (status !== '' || next !== '') out.write(`\r\x1b[K${next === '' ? '' : `⏳ ${next}`}`);
    status = next;
  };
  const write = (text: string) => {
    if (status !== '') out.write('\r\x1b[K');
    out.write(text);
    status = '';
    showStatus();
  };
  return (event) => {
    switch (event.type) {
      case 'text_delta':
        return write(event.text);
      case 'tool_start': // R23: running from here; a queued call is not yet
        running.set(event.call.id, `${event.call.name}…`);
        return showStatus();
      case 'tool_update':
        running.set(event.toolCallId, `${running.get(event.toolCallId)?.split('…')[0] ?? 'tool'}… ${event.content}`);
        return showStatus();
      case 'tool_result':
        running.delete(event.message.toolCallId);
        showStatus();
        return write(`[${event.message.toolName}: ${event.message.isError ? 'failed' : 'done'}]\n`);
      case 'loop_end':
        return write(`\n(${event.reason})\n`);
      default:
        return undefined;
    }
  };
}

export function demoProvider(): Provider {
  return scriptedProvider([
    [
      { type: 'message_start' },
      { type: 'text_delta', text: 'Let me look that up.\n' },
      { type: 'tool_call', call: { id: 'call_1', name: 'search', input: { query: 'rxjs expand' } } },
      { type: 'message_end', stopReason: 'toolUse' },
    ],
    (input: ProviderInput) => [
      { type: 'message_start' },
      { type: 'text_delta', text: 'Found: ' },
      { type: 'text_delta', text: String(input.messages[input.messages.length - 1]?.content) },
      { type: 'message_end', stopReason: 'stop' },
    ],
  ]);
}

export function demoRegistry(stepMs = 150): ToolRegistry {
  return new ToolRegistry().register({
    name: 'search',
    description: 'Searches the docs',
    input: { query: 'what to look for' },
    // an Observable tool: every value but the last is progress (a tool_update), the last is the result
    handler: (input: Record<string, string>) =>
      new Observable<string>((subscriber) => {
        const steps = ['25%', '50%', '75%', `3 pages about ${input.query}`];
        let step = 0;
        const timer = setInterval(() => {
          subscriber.next(steps[step++]!);
          if (step === steps.length) subscriber.complete();
        }, stepMs);
        return () => clearInterval(timer);
      }),
  });
}

export function runCli(provider: Provider, registry: ToolRegistry, prompt: string, out: Output): Promise<LoopEvent> {
  return lastValueFrom(
    runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: prompt }] }).pipe(tap(renderer(out))),
  );
}

if (require.main === module) {
  runCli(demoProvider(), demoRegistry(), process.argv[2] ?? 'What does expand do?', process.stdout).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
