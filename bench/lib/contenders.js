'use strict';
// Every contender by name. Each has: name, label, load() (imports the peer, ESM), and
// run(spec, counters, echo) -> Promise of each conversation's final messages.
const floor = require('../contenders/floor.js');
const rxExpand = require('../contenders/rx-expand.js');
const rxToolLoop = require('../contenders/rx-tool-loop.js');
const pi = require('../contenders/pi.js');
const aiSdk = require('../contenders/ai-sdk.js');
const openaiAgents = require('../contenders/openai-agents.js');

const ALL = [floor, rxExpand, rxToolLoop, pi.runAgentLoop, pi.agentLoop, aiSdk.generateText, aiSdk.streamText, openaiAgents.run, openaiAgents.stream];
const byName = new Map(ALL.map((contender) => [contender.name, contender]));

function contender(name) {
  const found = byName.get(name);
  if (!found) throw new Error(`bench: no contender named ${name} (have: ${[...byName.keys()].join(', ')})`);
  return found;
}

module.exports = { ALL, contender };
