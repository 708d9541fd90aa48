/**
 * An effect-style service (as an Angular or NgRx service would be, without Angular) on `conversation()`:
 * the state is `toViewModel()`'s (status, the turn's text and tools, the history, usage) in a
 * `BehaviorSubject`. `ask()` sends a prompt; under policy `'switch'` one that arrives while a loop runs
 * aborts that loop — its turn, with what the user saw of it, stays in the history — and then runs.
 * `stop()` aborts the running loop the same way; `destroy()` tears everything down.
 */
import { BehaviorSubject, Observable, Subject, Subscription } from 'rxjs';
import { LoopViewModel, Provider, ToolRegistry, conversation, initialViewModel, toViewModel } from '../src/index.js';

export class ConversationService {
  private readonly state = new BehaviorSubject<LoopViewModel>(initialViewModel);
  private readonly prompts = new Subject<string>();
  private readonly stops = new Subject<void>();
  private readonly subscription: Subscription;

  /** The state, for templates and selectors. */
  readonly conversation$: Observable<LoopViewModel> = this.state.asObservable();

  constructor(provider: Provider, registry: ToolRegistry) {
    this.subscription = this.prompts
      .pipe(conversation({ provider, registry, policy: 'switch', abort$: this.stops }), toViewModel())
      .subscribe(this.state);
  }

  ask(prompt: string): void {
    this.prompts.next(prompt);
  }

  /** Aborts the running loop (its turn stays in the history); a prompt not started yet never runs. */
  stop(): void {
    this.stops.next();
  }

  destroy(): void {
    this.subscription.unsubscribe();
    this.state.complete();
  }
}
