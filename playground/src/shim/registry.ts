/**
 * What the scenario files tell the page while they load and run: each file's `scenario(name, body)`
 * (registered, never run by itself), which cold lines are the provider's turns and which the tools'
 * (told by the `rx-tool-loop/testing` shim), and the recorder the `rx-tool-loop` shim hands each loop to.
 */
import type { Observable } from 'rxjs';
import type { RunHelpers } from 'rxjs/testing';
import type { Recorder } from '../recorder';

export interface Scenario {
  /** The file, e.g. `01-s04-current-time`. */
  id: string;
  /** The name the file gives `scenario()`. */
  name: string;
  /** The file's doc comment. */
  doc: string;
  /** The file's `diagram` lines, name and marble, as written. */
  diagram: [string, string][];
  body: (helpers: RunHelpers) => void;
}

export const scenarios: Scenario[] = [];

/** The `scenario` of one file (the build makes one module per file around this). */
export function fileScenario(file: { id: string; doc: string; diagram: [string, string][] }) {
  return (name: string, body: (helpers: RunHelpers) => void): void => {
    scenarios.push({ ...file, name, body });
  };
}

/** The provider each `marbleProvider(...turns)` made, and its turns. */
export const providerTurns = new WeakMap<object, readonly Observable<unknown>[]>();
/** Every turn handed to `marbleProvider`: drawn as provider calls, not as cold lines of their own. */
export const turnLines = new WeakSet<object>();
/** The cold lines handed to `marbleTools` as a tool's value, and the tool's name. */
export const toolLines = new WeakMap<object, string>();

let current: Recorder | undefined;

/** The recorder of the run being started, while its scenario body runs. */
export function currentRecorder(): Recorder | undefined {
  return current;
}

export function withRecorder<T>(recorder: Recorder, body: () => T): T {
  current = recorder;
  try {
    return body();
  } finally {
    current = undefined;
  }
}
