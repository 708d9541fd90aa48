/**
 * The bench's W6 wire and server check (bench/lib/w6-wire.js, bench/lib/w6-server.js), for the specs that run the
 * loop on them per API (P16, P20): what W6 measures must be a conversation that works.
 */
import type { LoopEvent } from '../../src/index.js';
import { ToolRegistry } from '../../src/index.js';

export interface Scenario {
  name: string;
  turns: number;
  lead: number;
  final: number;
}
interface W6Wire {
  SCENARIOS: Record<string, Scenario>;
  TOOLS: Record<string, { description: string; input: Record<string, string> }>;
  reply(api: string, scenario: Scenario, turn: number): { sse: string; tag?: string }[];
  turnText(scenario: Scenario, turn: number): string;
  conversationChars(scenario: Scenario): number;
  turnOf(name: string, input: unknown): number | undefined;
}
interface W6Server {
  check(api: string, request: unknown, model?: string): { error?: string; scenario?: Scenario; turn?: number };
}

// plain CommonJS of the bench's own (no types): required, as the bench does
export const W = require('../../bench/lib/w6-wire.js') as W6Wire;
export const { check } = require('../../bench/lib/w6-server.js') as W6Server;

/** W6's tools, each run noted in `runs` with the turn its input names. */
export function w6Registry(runs: { name: string; turn: number | undefined }[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const [name, spec] of Object.entries(W.TOOLS)) {
    registry.register({ name, description: spec.description, input: spec.input, handler: (input) => (runs.push({ name, turn: W.turnOf(name, input) }), `${name}: done`) });
  }
  return registry;
}

/**
 * Per tool turn, in the order they came: each tool's start and the first token of the text that follows the
 * calls (the scenario's first `lead` tokens come before them).
 */
export function startsAndText(events: readonly LoopEvent[], scenario: Scenario): string[] {
  const lead = W.turnText({ ...scenario, turns: 1, final: scenario.lead }, 1).length;
  let turn = 0;
  let seen = '';
  const order: string[] = [];
  for (const event of events) {
    if (event.type === 'turn_start') [turn, seen] = [event.turn, ''];
    if (event.type === 'tool_start') order.push(`${turn}: start ${event.call.name}`);
    if (event.type === 'text_delta' && turn < scenario.turns) {
      if (seen.length === lead) order.push(`${turn}: text after the calls`);
      seen += event.text;
    }
  }
  return order;
}
