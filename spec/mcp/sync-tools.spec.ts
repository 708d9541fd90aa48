/** M1: syncTools keeps a registry equal to the latest list while subscribed. */
import { BehaviorSubject, Subject } from 'rxjs';
import { type Tool, ToolRegistry } from 'rx-tool-loop';
import { syncTools } from 'rx-tool-loop/mcp';

const tool = (name: string): Tool => ({ name, description: name, inputSchema: { type: 'object' }, handler: () => name });
const names = (registry: ToolRegistry) => registry.getSpecs().map((spec) => spec.name);

describe('syncTools', () => {
  it('M1: each list replaces the previous one in the registry, other tools stay; unsubscribing removes its tools', () => {
    const registry = new ToolRegistry().register(tool('own'));
    const lists = new Subject<Tool[]>();
    const seen: string[][] = [];
    const subscription = syncTools(registry, lists).subscribe((tools) => seen.push(tools.map((t) => t.name)));
    lists.next([tool('a'), tool('b')]);
    expect(names(registry)).toEqual(['own', 'a', 'b']);
    lists.next([tool('b'), tool('c')]);
    expect(names(registry)).toEqual(['own', 'b', 'c']);
    expect(seen).toEqual([['a', 'b'], ['b', 'c']]);
    subscription.unsubscribe();
    expect(names(registry)).toEqual(['own']);
  });

  it('M1: when tools$ completes or errors its tools are removed', () => {
    const registry = new ToolRegistry();
    const lists = new BehaviorSubject<Tool[]>([tool('a')]);
    let failure: unknown;
    syncTools(registry, lists).subscribe({ error: (error: unknown) => (failure = error) });
    expect(names(registry)).toEqual(['a']);
    lists.error(new Error('gone'));
    expect(names(registry)).toEqual([]);
    expect(failure).toEqual(new Error('gone'));
    const done = new BehaviorSubject<Tool[]>([tool('b')]);
    syncTools(registry, done).subscribe();
    done.complete();
    expect(names(registry)).toEqual([]);
  });

  it('M1: a name another tool already has is an error that names it, and nothing of that list stays registered', () => {
    const registry = new ToolRegistry().register(tool('a'));
    const lists = new Subject<Tool[]>();
    let failure: unknown;
    syncTools(registry, lists).subscribe({ error: (error: unknown) => (failure = error) });
    lists.next([tool('b'), tool('a')]);
    expect(failure).toEqual(new Error('syncTools: a tool named "a" is already registered (give the server a prefix)'));
    expect(names(registry)).toEqual(['a']);
  });

  it('syncTools removes only the tools it added (decided): a tool of the same name registered by someone else since stays', () => {
    const registry = new ToolRegistry().register(tool('own'));
    const lists = new Subject<Tool[]>();
    const subscription = syncTools(registry, lists).subscribe();
    lists.next([tool('a'), tool('b')]);
    const theirs = tool('b');
    registry.unregister('b');
    registry.register(theirs); // the application puts its own `b` in
    lists.next([tool('a')]); // the next list drops `b`: theirs is not syncTools' to remove
    expect(names(registry)).toEqual(['own', 'b', 'a']);
    expect(registry.get('b')).toBe(theirs);
    subscription.unsubscribe();
    expect(names(registry)).toEqual(['own', 'b']);
    expect(registry.get('b')).toBe(theirs);
  });

  it('M1: bad arguments are refused at call time', () => {
    expect(() => syncTools({} as never, new Subject<Tool[]>())).toThrow(new TypeError('syncTools: registry must be a ToolRegistry (got {}, an object)'));
    expect(() => syncTools(new ToolRegistry(), [] as never)).toThrow(TypeError);
  });
});
