/**
 * T9's check: a recorded test is run as generated — compiled from its source (esbuild, as ts-jest's
 * isolatedModules would) and its one test body run here, with this jest's `require` (so `rx-tool-loop`
 * resolves as in a user's project) and `expect`. A failure shows the generated source.
 */
import { transformSync } from 'esbuild';
import type { Observable } from 'rxjs';
import { TestScheduler, type RunHelpers } from 'rxjs/testing';
import type { ConversationEvent } from 'rx-tool-loop';
import { recordMarbles, type MarbleRecording, type RecordOptions } from 'rx-tool-loop/testing';

/** Records `body`'s run inside `TestScheduler.run`. */
export function recorded(body: (helpers: RunHelpers) => Observable<ConversationEvent>, options?: RecordOptions): MarbleRecording {
  let recording: MarbleRecording | undefined;
  new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run((helpers) => {
    recordMarbles(body(helpers), options).subscribe((r) => (recording = r));
  });
  if (recording === undefined) throw new Error('the run never completed: nothing was recorded');
  return recording;
}

/** Runs the generated test file's test; throws with its source when it fails. */
export function replay(test: string): void {
  const { code } = transformSync(test, { loader: 'ts', format: 'cjs' });
  const bodies: (() => void)[] = [];
  const file = new Function('require', 'test', 'expect', code) as (r: NodeRequire, t: (name: string, fn: () => void) => void, e: typeof expect) => void;
  file(require, (_name, fn) => bodies.push(fn), expect);
  if (bodies.length !== 1) throw new Error(`the recorded file has ${bodies.length} tests:\n${test}`);
  try {
    bodies[0]!();
  } catch (error) {
    throw new Error(`the recorded test failed:\n${test}\n${(error as Error).message}`);
  }
}
