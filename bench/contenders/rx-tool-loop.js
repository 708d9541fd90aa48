'use strict';
// rx-tool-loop as its users call it: one ToolRegistry, `runEventedToolLoop` per conversation, every
// event consumed by a subscriber. `forLibrary` makes the same contender over another build of the
// library (the baseline, lib/baseline.js), or with an operator after the loop (`through`: O4's traceLoop,
// contenders/rx-tool-loop-otel.js); the default export runs the build under test (lib/env.js).
const { lib: current, rxjs } = require('../lib/env.js');
const { fakeProvider } = require('../lib/rx-provider.js');
const S = require('../lib/script.js');

function registryFor(lib, echo) {
  return new lib.ToolRegistry().register({
    name: 'echo',
    description: S.ECHO_DESCRIPTION,
    input: { text: 'the text to return', turn: 'the turn number' },
    handler: (input) => echo(input),
  });
}

function conversation(lib, spec, counters, registry, provider = fakeProvider(spec, counters), through = undefined) {
  const loop = lib.runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'hi' }], maxTurns: spec.turns });
  return S.consume(through === undefined ? loop : loop.pipe(through), counters);
}

/**
 * The contender over the library `loadLibrary()` returns (loaded at the first use, then kept); `loadThrough()`,
 * when given, makes the operator every conversation's events go through.
 */
function forLibrary({ name, label, loadLibrary, loadThrough }) {
  let lib;
  let through;
  const library = () => {
    if (lib) return lib;
    const loaded = loadLibrary();
    // the fake provider's Observables come from the bench's rxjs: the build must use the same one
    const probe = loaded.runEventedToolLoop({ provider: () => rxjs.EMPTY, registry: new loaded.ToolRegistry(), messages: [] });
    if (!(probe instanceof rxjs.Observable)) throw new Error(`${label} uses another rxjs instance than the bench`);
    through = loadThrough?.();
    return (lib = loaded);
  };
  return {
    name,
    label,
    library,
    async load() {
      library();
    },
    run(spec, counters, echo) {
      const registry = registryFor(library(), echo);
      return S.many(spec, () => conversation(lib, spec, counters, registry, undefined, through));
    },
  };
}

module.exports = forLibrary({ name: 'rx-tool-loop', label: 'rx-tool-loop (runEventedToolLoop + ToolRegistry)', loadLibrary: () => current });
module.exports.forLibrary = forLibrary;
module.exports.registryFor = registryFor;
