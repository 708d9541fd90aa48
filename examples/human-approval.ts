/**
 * Human approval in an RxJS app (H1, H2, H5). `beforeToolCall` asks a person through streams: each call
 * that needs approval opens an `ApprovalRequest` (the UI shows a dialog), and the person's decision comes
 * back on `decisions$`, keyed by the request's id. The hook waits for the decision on *its* request only,
 * so a stale one — a late click on a dialog for an earlier call, even one with the same call id from an
 * earlier turn, or a decision replayed by a store — never approves a newer call. While it waits, only
 * that call waits; cancelling the run closes the dialog.
 *
 * Around it, a redux-observable-style epic: `agent/prompt` actions start a run (a new prompt cancels the
 * running one), loop events and approval dialogs go out as actions, `approval/decided` actions come in.
 */
import { Observable, Subject, filter, finalize, map, merge, switchMap } from 'rxjs';
import type { BeforeToolCall, LoopEvent, Provider, ToolCall, ToolDecision, ToolRegistry } from '../src/index.js';
import { runEventedToolLoop } from '../src/index.js';

/** A call waiting for a person; `id` is unique per question, not per call. */
export interface ApprovalRequest {
  id: string;
  call: ToolCall;
  turn: number;
}

/** A person's answer to the request `requestId`. */
export interface ApprovalDecision {
  requestId: string;
  approve: boolean;
  reason?: string;
}

/** What the UI needs to know: a dialog to open, or one to close (answered, or the run was cancelled). */
export type ApprovalDialog = { type: 'open'; request: ApprovalRequest } | { type: 'close'; requestId: string };

/**
 * A `beforeToolCall` that asks a person about each call `needsApproval` picks (others run at once), and the
 * dialogs to show. Subscribe to `dialogs$` before the run starts: it is hot.
 */
export function approvalGate(decisions$: Observable<ApprovalDecision>, needsApproval: (call: ToolCall) => boolean) {
  const dialogs = new Subject<ApprovalDialog>();
  let asked = 0;
  const beforeToolCall: BeforeToolCall = (call, { turn }) => {
    if (!needsApproval(call)) return undefined;
    return new Observable<ToolDecision>((subscriber) => {
      const request: ApprovalRequest = { id: `approval-${++asked}`, call, turn };
      // listen first, then open the dialog: a UI that answers at once is not missed
      const decision = decisions$
        .pipe(
          filter((decision) => decision.requestId === request.id),
          map((decision): ToolDecision => (decision.approve ? { action: 'run' } : { action: 'deny', reason: decision.reason ?? 'the user said no' })),
          finalize(() => dialogs.next({ type: 'close', requestId: request.id })),
        )
        .subscribe(subscriber);
      dialogs.next({ type: 'open', request });
      return decision;
    });
  };
  return { beforeToolCall, dialogs$: dialogs.asObservable() };
}

export type AgentAction =
  | { type: 'agent/prompt'; text: string }
  | { type: 'agent/event'; event: LoopEvent }
  | { type: 'approval/open'; request: ApprovalRequest }
  | { type: 'approval/close'; requestId: string }
  | { type: 'approval/decided'; decision: ApprovalDecision };

export interface AgentDependencies {
  provider: Provider;
  registry: ToolRegistry;
  needsApproval: (call: ToolCall) => boolean;
}

/** The epic: prompts in; loop events and dialogs out; decisions in. A new prompt cancels the running loop. */
export function agentEpic(action$: Observable<AgentAction>, { provider, registry, needsApproval }: AgentDependencies): Observable<AgentAction> {
  const decisions$ = action$.pipe(
    filter((action): action is Extract<AgentAction, { type: 'approval/decided' }> => action.type === 'approval/decided'),
    map((action) => action.decision),
  );
  const { beforeToolCall, dialogs$ } = approvalGate(decisions$, needsApproval);
  const runs$ = action$.pipe(
    filter((action): action is Extract<AgentAction, { type: 'agent/prompt' }> => action.type === 'agent/prompt'),
    switchMap(({ text }) =>
      runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: text }], beforeToolCall }).pipe(
        map((event): AgentAction => ({ type: 'agent/event', event })),
      ),
    ),
  );
  const dialogActions$ = dialogs$.pipe(
    map((dialog): AgentAction => (dialog.type === 'open' ? { type: 'approval/open', request: dialog.request } : { type: 'approval/close', requestId: dialog.requestId })),
  );
  return merge(dialogActions$, runs$);
}
