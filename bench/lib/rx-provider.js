'use strict';
// The fake instant model as an rx-tool-loop `Provider`: a cold Observable that emits one model
// reply synchronously on subscribe (fresh event objects each call, as a real provider makes them).
const { rxjs } = require('./env.js');
const S = require('./script.js');

/** A provider for one conversation: its n-th subscription is turn n. */
function fakeProvider(spec, counters) {
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
      subscriber.next({ type: 'message_end', stopReason: more ? 'toolUse' : 'stop' });
      subscriber.complete();
    });
}

module.exports = { fakeProvider };
