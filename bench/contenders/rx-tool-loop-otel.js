'use strict';
// O4: rx-tool-loop as users call it, each conversation's events through `traceLoop` (rx-tool-loop/otel) on a
// no-op tracer: @opentelemetry/api with no SDK registered, as in an app that installed the API and records
// nothing. What the operator itself costs, beside the rx-tool-loop contender without it.
const path = require('node:path');
const { DIST } = require('../lib/paths.js');
const { lib } = require('../lib/env.js');
const { forLibrary } = require('./rx-tool-loop.js');

function noopTraced() {
  const { traceLoop } = require(path.join(DIST, 'otel', 'index.js'));
  // the API the library's otel entry resolves: one instance, as with rxjs
  const { trace } = require(require.resolve('@opentelemetry/api', { paths: [path.join(DIST, 'otel')] }));
  return traceLoop({ tracer: trace.getTracer('bench'), agentName: 'bench', model: 'fake' });
}

module.exports = forLibrary({
  name: 'rx-tool-loop+otel',
  label: 'rx-tool-loop + traceLoop (no-op tracer)',
  loadLibrary: () => lib,
  loadThrough: noopTraced,
});
