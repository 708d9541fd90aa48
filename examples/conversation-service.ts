/**
 * An effect-style service (as an Angular or NgRx service would be, without Angular): the conversation
 * is a `BehaviorSubject` that `turn_end` and `loop_end` events update; `ask()` starts a loop and
 * cancels the one still running; `stop()` cancels; `destroy()` ends everything.
 */
import { BehaviorSubject, Observable, Subject, Subscription, switchMap, takeUntil } from 'rxjs';
import type { AgentMessage, LoopEvent, Provider, ToolRegistry } from '../src/index.js';
import { runEventedToolLoop } from '../src/index.js';

export interface Conversation {
  messages: readonly AgentMessage[];
  status: 'idle' | 'thinking' | 'running tools';
  /** The assistant's text of the turn in progress. */
  draft: string;
}

export class ConversationService {
  private readonly state = new BehaviorSubject<Conversation>({ messages: [], status: 'idle', draft: '' });
  private readonly prompts = new Subject<string>();
  private readonly stops = new Subject<void>();
  private readonly subscription: Subscription;

  /** The conversation, for templates and selectors. */
  readonly conversation$: Observable<Conversation> = this.state.asObservable();

  constructor(provider: Provider, registry: ToolRegistry) {
    this.subscription = this.prompts
      .pipe(
        switchMap((prompt) =>
          runEventedToolLoop({
            provider,
            registry,
            messages: [...this.state.value.messages, { role: 'user', content: prompt }],
          }).pipe(takeUntil(this.stops)),
        ),
      )
      .subscribe((event) => this.state.next(reduce(this.state.value, event)));
  }

  ask(prompt: string): void {
    this.state.next({ ...this.state.value, status: 'thinking', draft: '' });
    this.prompts.next(prompt);
  }

  /** Cancels the running loop; the conversation keeps what the last finished turn left. */
  stop(): void {
    this.stops.next();
    this.state.next({ ...this.state.value, status: 'idle', draft: '' });
  }

  destroy(): void {
    this.subscription.unsubscribe();
    this.state.complete();
  }
}

function reduce(state: Conversation, event: LoopEvent): Conversation {
  switch (event.type) {
    case 'text_delta':
      return { ...state, draft: state.draft + event.text };
    case 'tool_start':
      return { ...state, status: 'running tools' };
    case 'turn_end':
      return { ...state, messages: event.messages, status: 'thinking', draft: '' };
    case 'loop_end':
      return { messages: event.messages, status: 'idle', draft: '' };
    default:
      return state;
  }
}
