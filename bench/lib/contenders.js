'use strict';
// Every contender by name. Each has: name, label, load() (imports the peer, ESM), and
// run(spec, counters, echo) -> Promise of each conversation's final messages.
const floor = require('../contenders/floor.js');
const rxExpand = require('../contenders/rx-expand.js');
const rxToolLoop = require('../contenders/rx-tool-loop.js');
const rxToolLoopOtel = require('../contenders/rx-tool-loop-otel.js');
const rxToolLoopLimited = require('../contenders/rx-tool-loop-limited.js');
const pi = require('../contenders/pi.js');
const aiSdk = require('../contenders/ai-sdk.js');
const openaiAgents = require('../contenders/openai-agents.js');
const baseline = require('./baseline.js').fromEnv();

// the baseline (when run.js built one): the rx-tool-loop contender over the build of an older commit
const rxToolLoopBaseline = baseline && rxToolLoop.forLibrary({ name: baseline.name, label: baseline.label, loadLibrary: () => require(baseline.entry) });

const ALL = [floor, rxExpand, rxToolLoop, rxToolLoopBaseline, rxToolLoopOtel, rxToolLoopLimited, pi.runAgentLoop, pi.agentLoop, aiSdk.generateText, aiSdk.streamText, openaiAgents.run, openaiAgents.stream].filter(Boolean);
const byName = new Map(ALL.map((contender) => [contender.name, contender]));

function contender(name) {
  const found = byName.get(name);
  if (!found) throw new Error(`bench: no contender named ${name} (have: ${[...byName.keys()].join(', ')})`);
  return found;
}

/** `names` with the baseline (if any) right after rx-tool-loop: it runs wherever rx-tool-loop runs. */
function withBaseline(names) {
  if (!baseline || names.includes(baseline.name)) return names;
  return names.flatMap((name) => (name === 'rx-tool-loop' ? [name, baseline.name] : [name]));
}

module.exports = { ALL, contender, baseline, withBaseline };
