import type { CreateMessageResult, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { EMPTY, Observable, type Subscription, catchError, concat, firstValueFrom, of, takeUntil, throwError } from 'rxjs';
import { toolProgress } from '../tools/tool-progress.js';
import type { HookAnswer } from '../types.js';
import { onAbort } from '../util/abort-signal.js';
import { NoAnswer, firstAnswer } from '../util/first-answer.js';
import { errorText } from '../util/values.js';
import { chainRequestHandler } from './client-hooks.js';
import type { McpClient, McpRequestExtra } from './mcp-client.js';
import { type McpElicitHandler, type McpElicitRequest, shownElicitation, withSchemaDefaults } from './mcp-elicit.js';
import { type McpSampling, type McpSamplingRequest, sampled, samplingInput, samplingProvider } from './mcp-sampling.js';
import { relatedCall } from './related-call.js';

/** Why an answer is given up on: the reason its signal aborts with, and a sampling's error to the server. */
const NOT_WANTED = 'rx-tool-loop: the answer is no longer wanted';

/** Closed when something ends (a call, the `mcpTools` subscription): a teardown added then runs at once. */
type Ends = Pick<Subscription, 'add' | 'remove'>;

/** What answers a server's requests for one `mcpTools` (M7, M8). */
export interface ServerRequestOptions {
  onElicit: McpElicitHandler | undefined;
  sampling: McpSampling | undefined;
  /** Closed when the `mcpTools` subscription ends: a request that relates to no call is given up on then. */
  ends: Ends;
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
        return elicit(onElicit, (request as { params: McpElicitRequest }).params, extra, options.ends);
      }),
    onElicit !== undefined,
  );
  if (sampling !== undefined) {
    const answerSampling = (request: unknown, extra: McpRequestExtra) => sample(sampling, (request as { params: McpSamplingRequest }).params, extra, options.ends);
    chain('sampling', 'sampling', () => chainRequestHandler(client, 'sampling/createMessage', CreateMessageRequestSchema, answerSampling), true);
  }
  return () => {
    for (const off of offs.splice(0)) off();
  };
}

/** M7: shown on the related call, then asked; an accepted answer gets the schema's defaults (SEP-1034). */
async function elicit(onElicit: McpElicitHandler, request: McpElicitRequest, extra: McpRequestExtra, subscription: Ends): Promise<ElicitResult> {
  const related = relatedCall();
  related?.show(toolProgress(request.message, { elicitation: shownElicitation(request) }));
  const result = await answerWhile(
    (signal) => onElicit(request, related === undefined ? { signal } : { call: related.call, signal }),
    of<ElicitResult>({ action: 'cancel' }),
    notWanted(extra, related?.ends ?? subscription),
  );
  return withSchemaDefaults(request, result);
}

/** M8: one call of the provider, unsubscribed when the related call ends. */
function sample(sampling: McpSampling, request: McpSamplingRequest, extra: McpRequestExtra, subscription: Ends): Promise<CreateMessageResult> {
  return answerWhile(
    () => {
      const input = samplingInput(request); // a request refused (tools) asks `sampling.provider` for nothing
      return sampled(samplingProvider(sampling, request), input);
    },
    throwError(() => new Error(NOT_WANTED)),
    notWanted(extra, relatedCall()?.ends ?? subscription),
  );
}

/** Emits when a request's answer is no longer wanted: the server cancelled it, or `ends` (its call's, else the subscription's) closed. */
function notWanted(extra: McpRequestExtra, ends: Ends): Observable<void> {
  return new Observable<void>((subscriber) => {
    const stop = () => subscriber.next();
    ends.add(stop); // run at once when it has closed already
    const stopListening = onAbort(extra.signal, stop);
    return () => {
      ends.remove(stop);
      stopListening();
    };
  });
}

/**
 * `ask`'s first answer (H1's {@link firstAnswer}), as a Promise; when `unwanted$` emits first, it is left (its signal
 * aborts) and the answer is `otherwise`'s. So is it when `ask`'s Observable completes with no value.
 */
function answerWhile<T>(ask: (signal: AbortSignal) => HookAnswer<T>, otherwise: Observable<T>, unwanted$: Observable<void>): Promise<T> {
  const asking = new AbortController();
  const answer$ = firstAnswer(() => ask(asking.signal), () => asking.abort(NOT_WANTED)).pipe(
    catchError((error: unknown) => (error instanceof NoAnswer ? EMPTY : throwError(() => error))),
    takeUntil(unwanted$),
  );
  return firstValueFrom(concat(answer$, otherwise));
}
