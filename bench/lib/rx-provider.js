'use strict';
// The fake instant model as an rx-tool-loop `Provider`: a cold Observable that emits one model
// reply synchronously on subscribe (fresh event objects each call, as a real provider makes them).
const S = require('./script.js');

/** A provider for one conversation: its n-th subscription is turn n (on the rxjs the bench's build resolves). */
function fakeProvider(spec, counters) {
  return fakeProviderOn(require('./env.js').rxjs, spec, counters);
}

/**
 * The same on a given rxjs (machinery.js and limits.js load a build of their choosing); `spec.usage`, when
 * set, is each reply's `message_end.usage` (a limiter counting tokens, L2).
 */
function fakeProviderOn(rxjs, spec, counters) {
  let turn = 0;
  return (input) =>
    new rxjs.Observable((subscriber) => {
      const t = ++turn;
      // a real provider reads (serialises) the whole history on every call
      if (spec.readHistory && input.messages.length === 0) throw new Error('no history');
      S.modelCall(spec, counters, t);
      subscriber.next({ type: 'message_start' });
      for (let i = 0; i < spec.deltas; i++) {
        if (spec.sample && (i & 0xffff) === 0) spec.sample();
        subscriber.next({ type: 'text_delta', text: S.delta(i) });
      }
      const more = S.hasTools(spec, t);
      if (more) {
        for (let k = 0; k < spec.calls; k++) {
          subscriber.next({ type: 'tool_call', call: { id: S.callId(t, k), name: 'echo', input: S.toolInput(t, k) } });
        }
      }
      const stopReason = more ? 'toolUse' : 'stop';
      subscriber.next(spec.usage === undefined ? { type: 'message_end', stopReason } : { type: 'message_end', stopReason, usage: spec.usage });
      subscriber.complete();
    });
}

module.exports = { fakeProvider, fakeProviderOn };
