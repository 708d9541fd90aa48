/**
 * An effect-style service (as an Angular or NgRx service would be, without Angular) on `conversation()`:
 * the state is `toViewModel()`'s (status, the turn's text and tools, the history, usage) in a
 * `BehaviorSubject`. `ask()` sends a prompt; under policy `'switch'` one that arrives while a loop runs
 * aborts that loop — its turn, with what the user saw of it, stays in the history — and then runs.
 * `stop()` aborts the running loop the same way; `destroy()` tears everything down.
 */
import { BehaviorSubject, Observable, Subject, Subscription, defer, repeat } from 'rxjs';
import { LoopViewModel, Provider, ToolRegistry, conversation, initialViewModel, toViewModel } from '../src/index.js';

export class ConversationService {
  private readonly state = new BehaviorSubject<LoopViewModel>(initialViewModel);
  private readonly prompts = new Subject<string>();
  private stopping = new AbortController();
  private readonly subscription: Subscription;

  /** The state, for templates and selectors. */
  readonly conversation$: Observable<LoopViewModel> = this.state.asObservable();

  constructor(provider: Provider, registry: ToolRegistry) {
    // conversation() cannot abort its running loop alone: stop() aborts the whole conversation's signal
    // (the loop ends `aborted`, then the conversation completes) and repeat() starts the next from its history
    const conversation$ = defer(() => {
      this.stopping = new AbortController();
      const messages = this.state.value.messages;
      return this.prompts.pipe(conversation({ provider, registry, messages, policy: 'switch', signal: this.stopping.signal }));
    });
    this.subscription = conversation$.pipe(repeat(), toViewModel()).subscribe(this.state);
  }

  ask(prompt: string): void {
    this.prompts.next(prompt);
  }

  /** Aborts the running loop (its turn stays in the history); a prompt not started yet never runs. */
  stop(): void {
    this.stopping.abort();
  }

  destroy(): void {
    this.subscription.unsubscribe();
    this.state.complete();
  }
}
