'use strict';
// The reference: a minimal RxJS `expand` loop, the least an RxJS loop must do. Each turn re-emits
// the provider's events, then runs the requested tools (forkJoin, results in call order), appends
// to one history array and emits turn_end; `expand` subscribes the next turn. No cancellation, no
// validation, no error handling, and not stack-safe (synchronous turns nest on the call stack).
const { rxjs } = require('../lib/env.js');
const { fakeProvider } = require('../lib/rx-provider.js');
const S = require('../lib/script.js');

const { EMPTY, concat, defer, expand, forkJoin, from, isObservable, map, mergeMap, of, tap } = rxjs;

const toObservable = (value) => (isObservable(value) ? value : value && typeof value.then === 'function' ? from(value) : of(value));

function loop({ provider, tools, messages, maxTurns }) {
  return defer(() => {
    const history = messages.slice();
    let goOn = false;
    const runTurn = (turn) =>
      defer(() => {
        let text = '';
        let stopReason = 'error';
        const calls = [];
        const record = (event) => {
          if (event.type === 'text_delta') text += event.text;
          else if (event.type === 'tool_call') calls.push(event.call);
          else if (event.type === 'message_end') stopReason = event.stopReason;
        };
        const finish = defer(() => {
          const assistant = { role: 'assistant', content: text, stopReason };
          if (calls.length > 0) assistant.toolCalls = calls;
          history.push(assistant);
          const results = calls.length === 0 ? of([]) : forkJoin(calls.map((call) => defer(() => toObservable(tools[call.name](call.input)))));
          return results.pipe(
            mergeMap((contents) => {
              const toolResults = contents.map((content, k) => ({ role: 'toolResult', toolCallId: calls[k].id, toolName: calls[k].name, content, isError: false }));
              history.push(...toolResults);
              goOn = stopReason === 'toolUse' && calls.length > 0 && turn < maxTurns;
              const events = toolResults.map((message) => ({ type: 'tool_result', message }));
              events.push({ type: 'turn_end', turn, assistant, toolResults, messages: history });
              if (!goOn) events.push({ type: 'loop_end', reason: stopReason, assistant, messages: history });
              return from(events);
            }),
          );
        });
        return concat(of({ type: 'turn_start', turn }), provider({ messages: history }).pipe(tap(record)), finish);
      });
    return runTurn(1).pipe(expand((event) => (event.type === 'turn_end' && goOn ? runTurn(event.turn + 1) : EMPTY)));
  });
}

module.exports = {
  name: 'rx-expand',
  label: 'minimal RxJS expand loop (reference)',
  loop,
  async load() {},
  run(spec, counters, echo) {
    const tools = { echo };
    return S.many(
      spec,
      () => S.consume(loop({ provider: fakeProvider(spec, counters), tools, messages: [{ role: 'user', content: 'hi' }], maxTurns: spec.turns }), counters),
    );
  },
};
