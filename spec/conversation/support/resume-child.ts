/**
 * The new process of spec/conversation/view-model-resume.spec.ts: it reads a history saved from the view model
 * (a JSON file), resumes it with a bare loop (R22) and prints one JSON line: the turns it played, the calls it
 * ran, and the history it ended with. Bundled by the spec with esbuild and run by plain node.
 */
import { lastValueFrom, toArray } from 'rxjs';
import { readFileSync } from 'node:fs';
import type { AgentMessage } from '../../../src/index.js';
import { runEventedToolLoop } from '../../../src/index.js';
import { timeModel, timeTools } from './time-model.js';

const messages = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as AgentMessage[];
void lastValueFrom(runEventedToolLoop({ provider: timeModel(), registry: timeTools(), messages }).pipe(toArray())).then((events) => {
  const turns = events.flatMap((e) => (e.type === 'turn_start' ? [e.turn] : []));
  const ran = events.flatMap((e) => (e.type === 'tool_start' ? [e.call.id] : []));
  const end = events[events.length - 1];
  process.stdout.write(`${JSON.stringify({ turns, ran, messages: end?.type === 'loop_end' ? end.messages : null })}\n`);
});
