/// <reference types="node" />
// Node's types for the default stdio streams and the session ids only: the declarations name web streams
import { randomUUID } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { type AgentContext, type McpServer, PROTOCOL_VERSION, type RequestPermissionRequest, RequestError, type SessionUpdate, type StopReason, agent as acpAgent, ndJsonStream } from '@agentclientprotocol/sdk';
import { Observable, Subject, type Subscription, firstValueFrom } from 'rxjs';
import { type ConversationOptions, conversation } from '../conversation/conversation.js';
import { checkOptions } from '../loop/loop-options.js';
import { persist } from '../sessions/persist.js';
import type { SessionStore } from '../sessions/session-entry.js';
import { SessionTree } from '../sessions/session-tree.js';
import type { AgentMessage, ApprovalAnswer, ApprovalDecision, ConversationEvent, LoopEventOf, ProviderFailure, ToolCall, UserMessage } from '../types.js';
import { onAbort } from '../util/abort-signal.js';
import { attachmentsProblem } from '../util/attachments.js';
import { errorText, isPlainObject, shown } from '../util/values.js';
import { acpPrompt } from './acp-prompt.js';
import { type ToolKindOf, acpUpdates, guessToolKind, historyUpdates, pendingToolCall } from './acp-updates.js';

/** E1: what a session is, for an {@link AcpAgent} made per session: its id, and what `session/new` (or `session/load`) said. */
export interface AcpSession {
  sessionId: string;
  /** The folder the editor opened, absolute. */
  cwd: string;
  /** The MCP servers the editor offers this session (connect them with `rx-tool-loop/mcp` if you like; not connected here). */
  mcpServers: readonly McpServer[];
}

/** E1: the loop configuration each session's conversation runs; serveAcp owns its history, its stop button and its approvals. */
export type AcpAgent = Omit<ConversationOptions, 'messages' | 'policy' | 'abort$' | 'approvals'>;

/** The options of {@link serveAcp}. */
export interface ServeAcpOptions {
  /** Any loop configuration (provider, registry, hooks, limits, …), or a function that makes one for each session. */
  agent: AcpAgent | ((session: AcpSession) => AcpAgent);
  /**
   * Each session's store (`jsonlStore(\`sessions/${sessionId}.jsonl\`)`): with it, every session is saved as it goes
   * (`persist`) and `session/load` is offered. Session ids are serveAcp's own (UUIDs); one the editor asks to load
   * that is not of that shape is refused before this is called, so it is safe in a file name.
   */
  store?: (sessionId: string) => SessionStore;
  /** H8: which calls wait for the editor's permission (`session/request_permission`); default: none. */
  needsApproval?: (call: ToolCall) => boolean;
  /** The ACP kind of a call, for the editor's icon; default {@link guessToolKind} (from the words of its name). */
  toolKind?: ToolKindOf;
  /** Where requests come from: newline-delimited JSON-RPC; default standard input. */
  input?: ReadableStream<Uint8Array>;
  /** Where answers and updates go (nothing else may write there); default standard output. */
  output?: WritableStream<Uint8Array>;
  /** `agentInfo` of `initialize`; default `{ name: 'rx-tool-loop', version: '0' }`. */
  agentInfo?: { name: string; version: string; title?: string };
}

/** What `session/request_permission` offers, and what each option decides (H8). */
const PERMISSIONS = [
  { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once', decision: true, always: false },
  { optionId: 'allow_always', name: 'Allow always', kind: 'allow_always', decision: true, always: true },
  { optionId: 'reject_once', name: 'Reject', kind: 'reject_once', decision: false, always: false },
  { optionId: 'reject_always', name: 'Reject always', kind: 'reject_always', decision: false, always: true },
] as const;

/** serveAcp's session ids: UUIDs; what `session/load` accepts is no wider (it names a file in a store). */
const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * E1: serves any loop configuration to an editor (Zed, JetBrains, …) over the Agent Client Protocol, on stdio
 * by default. `initialize` answers honest capabilities (`loadSession` only with a `store`; images, audio and
 * embedded resources in prompts, as attachments, F1); `session/new` starts a `conversation()` for the session;
 * `session/prompt` is one prompt of it, streamed as `session/update`s ({@link acpUpdates}) and answered with its
 * stop reason (`end_turn`; `max_tokens` for `length` or a spent `budget`; `max_turn_requests` for `maxTurns`;
 * `refusal` for a provider's refusal; `cancelled`); a loop that ends with any other error answers a JSON-RPC error
 * with its message; a prompt whose image, audio or blob is no valid attachment (F1: its bytes not base64, say)
 * answers invalid params, naming the problem, and the session goes on. `session/cancel` aborts the running loop
 * (its tools see their signal abort) and the prompt answers `cancelled`; a `$/cancel_request` for one prompt
 * cancels that prompt only (queued, it leaves the queue). A call `needsApproval` picks becomes
 * `session/request_permission` (allow once, allow always, reject, reject always; "always" holds for that tool in
 * that session; a cancelled request rejects), its answer the call's decision (H8). With a `store`, each session is
 * saved as it goes, and `session/load` replays its history as `session/update`s, then goes on from it, in this
 * process or a new one.
 *
 * Cold: each subscription serves one connection; it completes when the editor closes it (standard input ends), and
 * unsubscribing closes it, every running loop with it.
 *
 * ```text
 * editor:   initialize─session/new─session/prompt──────────────────session/cancel
 * agent:    caps───────id──────────update…(tool_call, chunks)…──── {stopReason: 'cancelled'}
 * ```
 *
 * ```ts
 * serveAcp({ agent: { provider, registry }, store: (id) => jsonlStore(`sessions/${id}.jsonl`), needsApproval: (call) => call.name === 'deploy' }).subscribe();
 * ```
 *
 * @throws TypeError at call time for a bad option (naming it), or a bad loop option of a fixed `agent`.
 */
export function serveAcp(options: ServeAcpOptions): Observable<never> {
  if (!isPlainObject(options)) throw new TypeError(`serveAcp: options must be an object (got ${shown(options)})`);
  const { agent, store, needsApproval = () => false, toolKind = guessToolKind, input, output } = options;
  if (typeof agent === 'function') {
    // made per session: checked by conversation() when a session starts
  } else if (isPlainObject(agent)) {
    checkOptions({ ...agent, messages: [] }, 'serveAcp: agent'); // R20: a bad loop option fails now, naming it
  } else {
    throw new TypeError(`serveAcp: agent must be a loop configuration ({ provider, registry, … }) or a function of the session that gives one (got ${shown(agent)})`);
  }
  for (const [name, value] of [['store', store], ['needsApproval', needsApproval], ['toolKind', toolKind]] as const) {
    if (value !== undefined && typeof value !== 'function') throw new TypeError(`serveAcp: ${name} must be a function (got ${shown(value)})`);
  }
  if (input !== undefined && typeof (input as Partial<ReadableStream>).getReader !== 'function') {
    throw new TypeError(`serveAcp: input must be a web ReadableStream of bytes (Readable.toWeb(stream) for a Node stream) (got ${shown(input)})`);
  }
  if (output !== undefined && typeof (output as Partial<WritableStream>).getWriter !== 'function') {
    throw new TypeError(`serveAcp: output must be a web WritableStream of bytes (Writable.toWeb(stream) for a Node stream) (got ${shown(output)})`);
  }
  const agentInfo = options.agentInfo ?? { name: 'rx-tool-loop', version: '0' };
  const agentFor = typeof agent === 'function' ? agent : () => agent;

  return new Observable<never>((subscriber) => {
    const sessions = new Map<string, AcpSessionRun>();
    const settings: SessionSettings = { needsApproval, toolKind };
    /** Starts a session's conversation from `messages`, saved into `saved` when there is a store. */
    const open = (client: AgentContext, session: AcpSession, messages: readonly AgentMessage[], saved?: { tree: SessionTree; store: SessionStore }) => {
      const run = new AcpSessionRun(session.sessionId, client, settings);
      run.start(agentFor(session), messages, saved); // a bad configuration fails session/new, and no session is left
      sessions.set(session.sessionId, run);
      return run;
    };
    const app = acpAgent({ name: agentInfo.name })
      .onRequest('initialize', () => ({
        protocolVersion: PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: store !== undefined,
          promptCapabilities: { image: true, audio: true, embeddedContext: true },
        },
        agentInfo,
        authMethods: [],
      }))
      .onRequest('session/new', async ({ params, client }) => {
        const sessionId = randomUUID();
        const session: AcpSession = { sessionId, cwd: params.cwd, mcpServers: params.mcpServers };
        if (store === undefined) {
          open(client, session, []);
        } else {
          const sessionStore = store(sessionId);
          const tree = await firstValueFrom(SessionTree.load(sessionStore));
          open(client, session, tree.context(), { tree, store: sessionStore });
        }
        return { sessionId };
      })
      .onRequest('session/prompt', async ({ params, signal }) => {
        const run = sessions.get(params.sessionId);
        if (run === undefined) throw RequestError.sessionNotFound(params.sessionId);
        const message = acpPrompt(params.prompt);
        // F1: the SDK checks only that the bytes are a string; in the conversation a bad one would end the session
        const problem = message.attachments === undefined ? undefined : attachmentsProblem(message.attachments);
        if (problem !== undefined) throw RequestError.invalidParams({ problem }, `the prompt's ${problem}`);
        return { stopReason: await run.prompt(message, signal) };
      })
      .onNotification('session/cancel', ({ params }) => sessions.get(params.sessionId)?.cancel());
    if (store !== undefined) {
      app.onRequest('session/load', async ({ params, client }) => {
        const { sessionId } = params;
        if (!SESSION_ID.test(sessionId)) throw RequestError.invalidParams({ sessionId }, `not a session id of this agent: ${JSON.stringify(sessionId)}`);
        const live = sessions.get(sessionId);
        if (live !== undefined) {
          await replay(client, sessionId, live.history, toolKind);
          return {};
        }
        const sessionStore = store(sessionId);
        const tree = await firstValueFrom(SessionTree.load(sessionStore));
        if (tree.leaf === null) throw RequestError.sessionNotFound(sessionId);
        const messages = tree.context();
        // the history first, then what a resumed history runs (R22) after it
        await replay(client, sessionId, messages, toolKind);
        open(client, { sessionId, cwd: params.cwd, mcpServers: params.mcpServers }, messages, { tree, store: sessionStore });
        return {};
      });
    }
    const connection = app.connect(ndJsonStream(output ?? stdout(), input ?? stdin()));
    connection.closed.then(
      () => subscriber.complete(),
      (error: unknown) => subscriber.error(error),
    );
    return () => {
      for (const run of sessions.values()) run.close();
      sessions.clear();
      connection.close();
    };
  });
}

/** E1: `messages` as the updates `session/load` replays; resolves once the last is handed to the connection. */
function replay(client: AgentContext, sessionId: string, messages: readonly AgentMessage[], toolKind: ToolKindOf): Promise<unknown> {
  let sent: Promise<unknown> = Promise.resolve();
  for (const update of historyUpdates(messages, toolKind)) sent = client.notify('session/update', { sessionId, update });
  return sent;
}

const stdin = () => Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>;
const stdout = () => Writable.toWeb(process.stdout) as unknown as WritableStream<Uint8Array>;

interface SessionSettings {
  needsApproval: (call: ToolCall) => boolean;
  toolKind: ToolKindOf;
}

/** A prompt waiting for its answer: what it says, how it ends, and what the loop told about it so far. */
interface PendingPrompt {
  message: UserMessage;
  resolve(stopReason: StopReason): void;
  reject(error: unknown): void;
  /** A cancel came for it: it answers `cancelled` whatever the loop's reason. */
  cancelled: boolean;
  /** The last model call's failure (a refusal answers `refusal`). */
  failure?: ProviderFailure | undefined;
}

/** One session of a connection: its conversation, the prompts waiting for their answer, its remembered permissions. */
class AcpSessionRun {
  /** The history as the events last told it (R29): what a second `session/load` of a live session replays. */
  history: readonly AgentMessage[] = [];
  private readonly prompts = new Subject<UserMessage>();
  private readonly cancels = new Subject<void>();
  private readonly decisions = new Subject<ApprovalAnswer>();
  /** "Allow always" / "Reject always", by tool name, for this session. */
  private readonly always = new Map<string, boolean>();
  /**
   * Prompts sent, in order, held here until the one before has ended: the conversation queues them too, but
   * cannot take one out, and a `$/cancel_request` takes out its prompt only. `given` is in the conversation and
   * has not joined the history yet; `current` has joined and its loop runs.
   */
  private readonly queued: PendingPrompt[] = [];
  private given: PendingPrompt | undefined;
  private current: PendingPrompt | undefined;
  /** The signal of the permission requests in flight: {@link withdraw} aborts it when their loop ends. */
  private asking = new AbortController();
  private subscription: Subscription | undefined;
  private failed: { error: unknown } | undefined;
  /** The last notification handed to the connection: a prompt answers after it, so its updates come first. */
  private sent: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly sessionId: string,
    private readonly client: AgentContext,
    private readonly settings: SessionSettings,
  ) {}

  start(agent: AcpAgent, messages: readonly AgentMessage[], saved?: { tree: SessionTree; store: SessionStore }): void {
    this.history = messages;
    const { needsApproval } = this.settings;
    const events$ = this.prompts.pipe(
      conversation({
        ...agent,
        messages,
        abort$: this.cancels,
        approvals: { needsApproval: (call) => this.always.get(call.name) !== true && needsApproval(call), decisions: this.decisions },
      }),
    );
    this.subscription = (saved === undefined ? events$ : events$.pipe(persist(saved.tree, saved.store))).subscribe({
      next: (event) => this.handle(event),
      error: (error: unknown) => this.fail(error),
      // only the agent's own `signal` completes it: a prompt after that must still be answered
      complete: () => this.fail(new Error('the agent stopped: its signal aborted')),
    });
  }

  /** One prompt: resolves with its stop reason once its loop has ended (or it was dropped), after its updates. */
  async prompt(message: UserMessage, signal: AbortSignal): Promise<StopReason> {
    if (this.failed !== undefined) throw RequestError.internalError(undefined, `the session cannot go on: ${errorText(this.failed.error)}`);
    const stopReason = await new Promise<StopReason>((resolve, reject) => {
      let stopListening = () => {};
      const settle = (end: () => void) => {
        stopListening();
        end();
      };
      const pending: PendingPrompt = { message, resolve: (stop) => settle(() => resolve(stop)), reject: (error) => settle(() => reject(error)), cancelled: false };
      this.queued.push(pending);
      // $/cancel_request for this prompt
      stopListening = onAbort(signal, () => this.cancelPrompt(pending));
      this.next();
    });
    await this.sent;
    return stopReason;
  }

  /** `session/cancel`: the running loop aborts (R11, its tools torn down), waiting prompts are dropped; each answers `cancelled`. */
  cancel(): void {
    for (const pending of this.queued.splice(0)) pending.resolve('cancelled');
    if (this.current === undefined && this.given === undefined) return; // nothing runs: a cancel racing an answer
    if (this.current !== undefined) this.current.cancelled = true;
    if (this.given !== undefined) this.given.cancelled = true;
    this.withdraw();
    this.cancels.next();
  }

  /** `$/cancel_request` for one prompt: queued, it leaves the queue; running, its loop aborts (R11); it answers `cancelled`. */
  private cancelPrompt(pending: PendingPrompt): void {
    const at = this.queued.indexOf(pending);
    if (at >= 0) {
      this.queued.splice(at, 1);
      return pending.resolve('cancelled');
    }
    if (pending !== this.current && pending !== this.given) return; // answered already
    pending.cancelled = true;
    if (pending === this.current) this.withdraw();
    // only this prompt is in the conversation: the others are still queued here
    this.cancels.next();
  }

  /** The next queued prompt goes to the conversation once the one before has ended. */
  private next(): void {
    if (this.failed !== undefined || this.current !== undefined || this.given !== undefined) return;
    this.given = this.queued.shift();
    if (this.given !== undefined) this.prompts.next(this.given.message);
  }

  close(): void {
    this.withdraw();
    this.subscription?.unsubscribe();
  }

  /** The permission requests in flight are cancelled (the editor drops its dialog); later ones get a new signal. */
  private withdraw(): void {
    this.asking.abort();
    this.asking = new AbortController();
  }

  private handle(event: ConversationEvent): void {
    for (const update of acpUpdates(event, this.settings.toolKind)) this.send(update);
    if ('messages' in event) this.history = event.messages;
    switch (event.type) {
      case 'user_message':
        this.current = this.given;
        this.given = undefined;
        return;
      case 'message_end':
        if (this.current !== undefined) this.current.failure = event.failure;
        return;
      case 'tool_approval':
        return void this.ask(event.call);
      case 'prompt_dropped': {
        const dropped = this.given;
        this.given = undefined;
        dropped?.resolve('cancelled');
        return this.next();
      }
      case 'loop_end': {
        const pending = this.current;
        this.current = undefined;
        this.withdraw(); // however the loop ended: a cancel, the agent's own signal, an error
        // pending is undefined for a loop that resumed a saved history (R22): no prompt asked for it
        if (pending !== undefined) {
          const stop = stopReason(event, pending);
          if (typeof stop === 'string') pending.resolve(stop);
          else pending.reject(stop);
        }
        return this.next();
      }
    }
  }

  /** H8: the editor decides; "always" is remembered for the tool, a cancelled or failed request rejects. */
  private async ask(call: ToolCall): Promise<void> {
    const remembered = this.always.get(call.name);
    if (remembered !== undefined) return this.decide(call, remembered);
    const { signal } = this.asking;
    let decision: ApprovalDecision = false;
    try {
      await this.sent; // the call's own tool_call update first
      const request: RequestPermissionRequest = {
        sessionId: this.sessionId,
        toolCall: pendingToolCall(call, this.settings.toolKind),
        options: PERMISSIONS.map(({ optionId, name, kind }) => ({ optionId, name, kind })),
      };
      const { outcome } = await this.client.request('session/request_permission', request, { cancellationSignal: signal });
      const chosen = outcome.outcome === 'selected' ? PERMISSIONS.find((option) => option.optionId === outcome.optionId) : undefined;
      if (chosen !== undefined) {
        decision = chosen.decision;
        if (chosen.always) this.always.set(call.name, chosen.decision);
      }
    } catch {
      // the connection closed or the editor failed the request: the call does not run
    }
    this.decide(call, decision);
  }

  private decide(call: ToolCall, decision: ApprovalDecision): void {
    this.decisions.next({ toolCallId: call.id, decision });
  }

  private send(update: SessionUpdate): void {
    this.sent = this.client.notify('session/update', { sessionId: this.sessionId, update }).catch(() => undefined);
  }

  /**
   * The conversation ended (its store failed, or the agent's signal aborted): every prompt waiting answers the
   * error, and so does every later one.
   */
  private fail(error: unknown): void {
    this.failed = { error };
    const failure = RequestError.internalError(undefined, errorText(error));
    const waiting = [this.current, this.given, ...this.queued.splice(0)];
    this.current = this.given = undefined;
    for (const pending of waiting) pending?.reject(failure);
  }
}

/** E1: the stop reason a loop's end answers `session/prompt` with, or the error it answers instead. */
function stopReason(end: LoopEventOf<'loop_end'>, pending: PendingPrompt): StopReason | RequestError {
  if (pending.cancelled) return 'cancelled';
  switch (end.reason) {
    case 'aborted':
      return 'cancelled';
    case 'length':
    case 'budget':
      return 'max_tokens';
    case 'maxTurns':
      return 'max_turn_requests';
    case 'error':
      return pending.failure?.kind === 'refusal' ? 'refusal' : RequestError.internalError(undefined, end.assistant.errorMessage ?? 'the model call failed');
    default:
      return 'end_turn';
  }
}
