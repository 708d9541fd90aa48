'use strict';
// rx-tool-loop as its users call it: one ToolRegistry, `runEventedToolLoop` per conversation, every
// event consumed by a subscriber. The library is the root's build (../dist).
const { lib } = require('../lib/env.js');
const { fakeProvider } = require('../lib/rx-provider.js');
const S = require('../lib/script.js');

function registryFor(echo) {
  return new lib.ToolRegistry().register({
    name: 'echo',
    description: S.ECHO_DESCRIPTION,
    input: { text: 'the text to return', turn: 'the turn number' },
    handler: (input) => echo(input),
  });
}

function conversation(spec, counters, registry, provider = fakeProvider(spec, counters)) {
  return new Promise((resolve, reject) => {
    let final;
    lib
      .runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'hi' }], maxTurns: spec.turns })
      .subscribe({
        next(event) {
          if (event.type === 'text_delta') {
            counters.deltas++;
            counters.chars += event.text.length;
          } else if (event.type === 'loop_end') {
            counters.ends++;
            final = event.messages;
          }
        },
        error: reject,
        complete: () => resolve(final),
      });
  });
}

module.exports = {
  name: 'rx-tool-loop',
  label: 'rx-tool-loop (runEventedToolLoop + ToolRegistry)',
  registryFor,
  async load() {},
  run(spec, counters, echo) {
    const registry = registryFor(echo);
    return S.many(spec, () => conversation(spec, counters, registry));
  },
};
