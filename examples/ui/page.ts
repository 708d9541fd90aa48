/**
 * The page of `npm run ui` (U7): a chat whose front-end is RxJS and nothing else. A prompt POSTs the history to
 * /chat; `fromSse(...).pipe(toViewModel())` turns the server's stream into the view model this file renders;
 * the stop button unsubscribes, which aborts the request, and the server's loop is unsubscribed in turn.
 */
import type { Subscription } from 'rxjs';
import { AgentMessage, LoopEvent, LoopViewModel, toViewModel } from 'rx-tool-loop';
import { fromSse } from 'rx-tool-loop/ui';

const form = document.querySelector<HTMLFormElement>('#prompt-form')!;
const prompt = document.querySelector<HTMLInputElement>('#prompt')!;
const send = document.querySelector<HTMLButtonElement>('#send')!;
const stop = document.querySelector<HTMLButtonElement>('#stop')!;
const log = document.querySelector<HTMLElement>('#log')!;
const status = document.querySelector<HTMLElement>('#status')!;

/** The conversation so far, as the last finished loop handed it out: the next prompt continues it. */
let history: readonly AgentMessage[] = [];
let running: Subscription | undefined;

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const text = prompt.value.trim();
  if (text === '' || running !== undefined) return;
  prompt.value = '';
  const messages: AgentMessage[] = [...history, { role: 'user', content: text }];
  const turn = document.createElement('section');
  turn.className = 'turn';
  turn.innerHTML = '<p class="user"></p><div class="assistant"><ul class="tools"></ul><p class="text"></p></div>';
  turn.querySelector('.user')!.textContent = text;
  log.append(turn);
  busy(true);
  running = fromSse<LoopEvent>('/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages }) })
    .pipe(toViewModel(messages))
    .subscribe({
      next: (view) => {
        render(turn, view);
        // a finished loop's history is the next prompt's start (R29)
        if (view.status === 'done') history = view.messages;
      },
      error: (error: Error) => finish(`error: ${error.message}`),
      complete: () => finish(''),
    });
});

stop.addEventListener('click', () => {
  running?.unsubscribe();
  finish('stopped');
});

function render(turn: HTMLElement, view: LoopViewModel): void {
  status.textContent = view.status;
  turn.querySelector('.text')!.textContent = view.text;
  const tools = turn.querySelector('.tools')!;
  // a turn's calls stay shown after the loop moved on to its answer
  for (const tool of view.tools) {
    let item = tools.querySelector<HTMLElement>(`[data-id="${CSS.escape(tool.id)}"]`);
    if (item === null) {
      item = document.createElement('li');
      item.dataset['id'] = tool.id;
      tools.append(item);
    }
    item.dataset['state'] = tool.state;
    item.textContent = `${tool.name} — ${tool.state}${tool.progress === undefined ? '' : `: ${tool.progress}`}`;
  }
}

function finish(why: string): void {
  running = undefined;
  busy(false);
  if (why !== '') status.textContent = why;
}

function busy(on: boolean): void {
  send.disabled = on;
  stop.disabled = !on;
  document.body.dataset['busy'] = String(on);
}
