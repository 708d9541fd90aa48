import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Observable, Unsubscribable } from 'rxjs';
import { toolProgress } from '../tools/tool-progress.js';
import type { ToolCall, ToolProgressValue } from '../types.js';
import { onAbort } from '../util/abort-signal.js';
import { fromAnswer } from '../util/answer.js';
import { errorText } from '../util/values.js';
import { chainRequestHandler } from './client-hooks.js';
import type { McpClient, McpRequestExtra } from './mcp-client.js';
import { type McpElicitHandler, type McpElicitRequest, shownElicitation, withSchemaDefaults } from './mcp-elicit.js';
import { type McpSampling, type McpSamplingRequest, sampled, samplingInput, samplingProvider } from './mcp-sampling.js';
import { relatedCall } from './related-call.js';

/** Why an answer is given up on: the reason its signal aborts with, and a sampling's error to the server. */
const NOT_WANTED = 'rx-tool-loop: the answer is no longer wanted';

/** Registers a teardown to run when something ends (at once if it has); returns what unregisters it. */
export type WhenEnds = (stop: () => void) => () => void;

/** The mark of a {@link CallInProgress}: the context a call runs in is read back by shape, never looked up. */
const IN_PROGRESS = Symbol('rx-tool-loop/mcp call in progress');

/** A `tools/call` while it runs, as a server's request related to it sees it (M7, M8). */
export interface CallInProgress {
  readonly [IN_PROGRESS]: true;
  /** The loop's call: id, name and input as the model sent them. */
  readonly call: ToolCall;
  /** Shows `value` as a `tool_update` of the call, while it runs. */
  show(value: ToolProgressValue): void;
  /** When the call ends: answered, failed, unsubscribed or timed out. */
  whenEnds: WhenEnds;
}

export function callInProgress(call: ToolCall, show: (value: ToolProgressValue) => void, whenEnds: WhenEnds): CallInProgress {
  return { [IN_PROGRESS]: true, call, show, whenEnds };
}

function isCallInProgress(value: unknown): value is CallInProgress {
  return typeof value === 'object' && value !== null && (value as Partial<CallInProgress>)[IN_PROGRESS] === true;
}

/** What answers a server's requests for one `mcpTools` (M7, M8). */
export interface ServerRequestOptions {
  onElicit: McpElicitHandler | undefined;
  sampling: McpSampling | undefined;
  /** When the `mcpTools` subscription ends: a request that relates to no call is given up on then. */
  whenEnds: WhenEnds;
}

/**
 * M7, M8: while `mcpTools` is subscribed, answers the server's `elicitation/create` with `onElicit` (without
 * one: the handler under ours, else `decline`) and, with `sampling`, its `sampling/createMessage`. A request that
 * came on a call's stream shows on that call and ends with it. Throws, naming the option, when the client cannot
 * take the handler (the SDK's `Client` was not created with the capability). Returns what takes the handlers off.
 */
export function answerServerRequests(client: McpClient, options: ServerRequestOptions): () => void {
  const { onElicit, sampling } = options;
  const offs: (() => void)[] = [];
  if (client.setRequestHandler === undefined) {
    if (onElicit !== undefined || sampling !== undefined) throw new TypeError(`mcpTools: ${onElicit !== undefined ? 'onElicit' : 'sampling'} needs a client with setRequestHandler()`);
    return () => undefined;
  }
  const chain = (option: string, capability: string, install: () => () => void, required: boolean) => {
    try {
      offs.push(install());
    } catch (error) {
      if (!required) return;
      for (const off of offs) off();
      throw new TypeError(
        `mcpTools: ${option} needs a client created with the ${capability} capability, e.g. new Client(info, { capabilities: { ${capability}: {} } }) (${errorText(error)})`,
      );
    }
  };
  chain(
    'onElicit',
    'elicitation',
    () =>
      chainRequestHandler(client, 'elicitation/create', ElicitRequestSchema, (request, extra, previous) => {
        if (onElicit === undefined) return previous === undefined ? Promise.resolve({ action: 'decline' }) : previous(request, extra);
        return elicit(onElicit, (request as { params: McpElicitRequest }).params, extra, options.whenEnds);
      }),
    onElicit !== undefined,
  );
  if (sampling !== undefined) {
    const answerSampling = (request: unknown, extra: McpRequestExtra) => sample(sampling, (request as { params: McpSamplingRequest }).params, extra, options.whenEnds);
    chain('sampling', 'sampling', () => chainRequestHandler(client, 'sampling/createMessage', CreateMessageRequestSchema, answerSampling), true);
  }
  return () => {
    for (const off of offs.splice(0)) off();
  };
}

/** M7: shown on the related call, then asked; an accepted answer gets the schema's defaults (SEP-1034). */
async function elicit(onElicit: McpElicitHandler, request: McpElicitRequest, extra: McpRequestExtra, subscriptionEnds: WhenEnds): Promise<ElicitResult> {
  const related = relatedCall(isCallInProgress);
  related?.show(toolProgress(request.message, { elicitation: shownElicitation(request) }));
  const result = await answerWhile(
    (signal) => fromAnswer(onElicit(request, related === undefined ? { signal } : { call: related.call, signal })),
    (): ElicitResult => ({ action: 'cancel' }),
    ends(extra, related, subscriptionEnds),
  );
  return withSchemaDefaults(request, result);
}

/** M8: one call of the provider, unsubscribed when the related call ends. */
function sample(sampling: McpSampling, request: McpSamplingRequest, extra: McpRequestExtra, subscriptionEnds: WhenEnds) {
  const related = relatedCall(isCallInProgress);
  return answerWhile(
    () => {
      const input = samplingInput(request); // a request refused (tools) asks `sampling.provider` for nothing
      return sampled(samplingProvider(sampling, request), input);
    },
    () => {
      throw new Error(NOT_WANTED);
    },
    ends(extra, related, subscriptionEnds),
  );
}

/** What ends a request's answer: the server's cancellation, the related call's end, else the subscription's. */
function ends(extra: McpRequestExtra, related: CallInProgress | undefined, subscriptionEnds: WhenEnds): WhenEnds[] {
  const cancelled: WhenEnds = (stop) => onAbort(extra.signal, stop);
  return [cancelled, related === undefined ? subscriptionEnds : related.whenEnds];
}

/**
 * `work`'s first value, as a Promise. When one of `ends` fires first, `work` is unsubscribed (its signal aborts)
 * and the answer is `ended()` (or its throw); so is it when `work` completes with no value.
 */
function answerWhile<T>(work: (signal: AbortSignal) => Observable<T>, ended: () => T, endings: WhenEnds[]): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const asking = new AbortController();
    const offs: (() => void)[] = [];
    let subscription: Unsubscribable | undefined;
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      for (const off of offs.splice(0)) off();
      subscription?.unsubscribe();
      outcome();
    };
    const end = () =>
      settle(() => {
        try {
          resolve(ended());
        } catch (error) {
          reject(error);
        }
      });
    const stop = () => {
      if (settled) return;
      asking.abort(NOT_WANTED);
      end();
    };
    for (const whenEnds of endings) offs.push(whenEnds(stop));
    if (settled) return;
    try {
      subscription = work(asking.signal).subscribe({
        next: (value) => settle(() => resolve(value)),
        error: (error: unknown) => settle(() => reject(error)),
        complete: end,
      });
    } catch (error) {
      settle(() => reject(error));
    }
    if (settled) subscription?.unsubscribe();
  });
}
