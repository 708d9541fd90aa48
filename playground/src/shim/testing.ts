/** `rx-tool-loop/testing` for the scenario files: the build's, and it notes which cold lines are turns and tools. */
import { isObservable } from 'rxjs';
import type { Observable } from 'rxjs';
import type { ProviderEvent, ToolRegistry } from 'rx-tool-loop';
import { marbleProvider as builtMarbleProvider, marbleTools as builtMarbleTools } from 'rx-tool-loop/testing';
import type { MarbleProvider, MarbleTool } from 'rx-tool-loop/testing';
import { providerTurns, toolLines, turnLines } from './registry';

export * from 'rx-tool-loop/testing';

export function marbleProvider(...turns: Observable<ProviderEvent>[]): MarbleProvider {
  const provider = builtMarbleProvider(...turns);
  providerTurns.set(provider, turns);
  for (const turn of turns) turnLines.add(turn);
  return provider;
}

export function marbleTools(table: Record<string, MarbleTool>): ToolRegistry {
  for (const [name, tool] of Object.entries(table)) if (isObservable(tool)) toolLines.set(tool, name);
  return builtMarbleTools(table);
}
