import { EventEmitter, getMaxListeners, once, setMaxListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { inspect, types } from 'node:util';
import { Observable, lastValueFrom } from 'rxjs';
import { LazyAbort } from '../../src/util/lazy-abort.js';
import { isAbortSignal, onAbort } from '../../src/util/abort-signal.js';
import { ToolRegistry, runEventedToolLoop } from '../../src/index.js';
import type { ProviderEvent } from '../../src/index.js';

/** Counts the AbortControllers made while `run` runs. */
function controllersMadeBy(run: () => void): number {
  const Real = globalThis.AbortController;
  let made = 0;
  globalThis.AbortController = class extends Real {
    constructor() {
      super();
      made++;
    }
  };
  try {
    run();
  } finally {
    globalThis.AbortController = Real;
  }
  return made;
}

describe('LazyAbort: the one context with a lazy signal (R31, R35)', () => {
  it('R35: the signal is the platform\'s own AbortSignal, made at its first read and only then; the same one after', () => {
    const context = new LazyAbort();
    expect(controllersMadeBy(() => void context.aborted)).toBe(0);
    let signal: AbortSignal | undefined;
    expect(controllersMadeBy(() => (signal = context.signal))).toBe(1);
    expect(Object.getPrototypeOf(signal)).toBe(AbortSignal.prototype);
    expect(types.isProxy(signal)).toBe(false);
    expect(isAbortSignal(signal)).toBe(true);
    expect(controllersMadeBy(() => expect(context.signal).toBe(signal))).toBe(0);
  });

  it('R35: the library hears a context it holds through onAbort, in order, each once, without making a signal', () => {
    const context = new LazyAbort();
    const heard: string[] = [];
    const made = controllersMadeBy(() => {
      const stop = context.onAbort(() => heard.push('removed'));
      context.onAbort(() => heard.push('a'));
      context.onAbort(() => heard.push('b'));
      stop();
      context.abort();
      context.abort(); // once only
      expect(context.aborted).toBe(true);
      context.onAbort(() => heard.push('late')); // already aborted: at once
    });
    expect(made).toBe(0);
    expect(heard).toEqual(['a', 'b', 'late']);
  });

  it('R35: as on an EventTarget, a listener that an earlier one removes while the abort is heard is not called', () => {
    const context = new LazyAbort();
    const heard: string[] = [];
    let stopB = (): void => {};
    context.onAbort(() => {
      heard.push('a');
      stopB();
    });
    stopB = context.onAbort(() => heard.push('b'));
    context.onAbort(() => heard.push('c'));
    context.abort();
    expect(heard).toEqual(['a', 'c']);
  });

  it('R35: a signal read before the abort aborts with the context and fires its abort event; onAbort hears it as any signal', () => {
    const context = new LazyAbort();
    const { signal } = context;
    const events: string[] = [];
    signal.addEventListener('abort', (event) => events.push(`listener ${event.type}`), { once: true });
    signal.onabort = () => events.push('onabort');
    onAbort(signal, () => events.push('onAbort'));
    expect(() => signal.throwIfAborted()).not.toThrow();
    context.abort();
    expect(events).toEqual(['listener abort', 'onabort', 'onAbort']);
    expect((signal.reason as Error).name).toBe('AbortError');
    expect(() => signal.throwIfAborted()).toThrow(expect.objectContaining({ name: 'AbortError' }));
  });

  it('R35: a signal first read after the abort is aborted (read late, as an async tool does)', () => {
    const context = new LazyAbort();
    context.abort();
    const { signal } = context;
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).name).toBe('AbortError');
    const fired = jest.fn();
    signal.addEventListener('abort', fired);
    expect(fired).not.toHaveBeenCalled(); // as any aborted signal: no second event
  });

  it('R35: the signal serves the platform: AbortSignal.any, timers, events.once, setMaxListeners, inspect', async () => {
    const context = new LazyAbort();
    const { signal } = context;
    const any = AbortSignal.any([signal]);
    const timer = sleep(60_000, 'never', { signal });
    const emitted = once(new EventEmitter(), 'never', { signal });
    setMaxListeners(20, signal);
    expect(getMaxListeners(signal)).toBe(20);
    expect(inspect(signal)).toContain('AbortSignal');
    expect(any.aborted).toBe(false);
    context.abort();
    expect(any.aborted).toBe(true);
    await expect(timer).rejects.toMatchObject({ name: 'AbortError' });
    await expect(emitted).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('R35: fetch hears it: aborting the context aborts a request still waiting for its reply', async () => {
    const server = createServer(() => {}); // never answers
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const context = new LazyAbort();
      const { port } = server.address() as AddressInfo;
      const request = fetch(`http://127.0.0.1:${port}/`, { signal: context.signal });
      server.once('request', () => context.abort());
      await expect(request).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('R35, R11: an inner loop given a context\'s signal ends aborted when the context aborts', async () => {
    const context = new LazyAbort();
    // a model that starts its reply and never ends it: only the abort ends the turn
    const provider = () => new Observable<ProviderEvent>((subscriber) => subscriber.next({ type: 'message_start' }));
    const end = lastValueFrom(runEventedToolLoop({ provider, registry: new ToolRegistry(), messages: [{ role: 'user', content: 'hi' }], signal: context.signal }));
    context.abort();
    await expect(end).resolves.toMatchObject({ type: 'loop_end', reason: 'aborted' });
  });
});
