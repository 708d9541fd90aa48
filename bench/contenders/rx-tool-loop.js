'use strict';
// rx-tool-loop as its users call it: one ToolRegistry, `runEventedToolLoop` per conversation, every
// event consumed by a subscriber. `forLibrary` makes the same contender over another build of the
// library (the baseline, lib/baseline.js), with an operator after the loop (`through`: O4's traceLoop,
// contenders/rx-tool-loop-otel.js) or with the provider wrapped (`wrap`: L6's `limited`,
// contenders/rx-tool-loop-limited.js); the default export runs the build under test (lib/env.js).
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
 * when given, makes the operator every conversation's events go through, and `loadWrap()` what every
 * conversation's provider is wrapped in.
 */
function forLibrary({ name, label, loadLibrary, loadThrough, loadWrap }) {
  let lib;
  let through;
  let wrap;
  const library = () => {
    if (lib) return lib;
    const loaded = loadLibrary();
    // the fake provider's Observables come from the bench's rxjs: the build must use the same one
    const probe = loaded.runEventedToolLoop({ provider: () => rxjs.EMPTY, registry: new loaded.ToolRegistry(), messages: [] });
    if (!(probe instanceof rxjs.Observable)) throw new Error(`${label} uses another rxjs instance than the bench`);
    through = loadThrough?.();
    wrap = loadWrap?.();
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
      return S.many(spec, () => conversation(lib, spec, counters, registry, wrap?.(fakeProvider(spec, counters)), through));
    },
  };
}

module.exports = forLibrary({ name: 'rx-tool-loop', label: 'rx-tool-loop (runEventedToolLoop + ToolRegistry)', loadLibrary: () => current });
module.exports.forLibrary = forLibrary;
module.exports.registryFor = registryFor;
