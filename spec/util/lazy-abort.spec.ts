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

describe('LazyAbort: the one context with a lazy signal (R31)', () => {
  // the first read of a process asks the platform whether it takes stand-ins (that probe makes one controller)
  beforeAll(() => void new LazyAbort().signal);

  it('R31: reading the signal, checking it and listening to it through onAbort make no AbortController', () => {
    const context = new LazyAbort();
    const heard: string[] = [];
    const made = controllersMadeBy(() => {
      const { signal } = context;
      expect(signal).toBeInstanceOf(AbortSignal);
      expect(isAbortSignal(signal)).toBe(true);
      expect(signal.aborted).toBe(false);
      expect(context.signal).toBe(signal); // one stand-in per context
      const stop = onAbort(signal, () => heard.push('removed'));
      onAbort(signal, () => heard.push('a'));
      onAbort(signal, () => heard.push('b'));
      stop();
      context.abort();
      context.abort(); // once only
      expect(signal.aborted).toBe(true);
      onAbort(signal, () => heard.push('late')); // already aborted: at once
    });
    expect(made).toBe(0);
    expect(heard).toEqual(['a', 'b', 'late']);
  });

  it('R31: as on an EventTarget, a listener that an earlier one removes while the abort is heard is not called', () => {
    const context = new LazyAbort();
    const heard: string[] = [];
    let stopB = (): void => {};
    onAbort(context.signal, () => {
      heard.push('a');
      stopB();
    });
    stopB = onAbort(context.signal, () => heard.push('b'));
    onAbort(context.signal, () => heard.push('c'));
    context.abort();
    expect(heard).toEqual(['a', 'c']);
  });

  it('R31: any other use makes the real signal, which aborts with the context and fires its abort event', () => {
    const context = new LazyAbort();
    const { signal } = context;
    const events: string[] = [];
    const made = controllersMadeBy(() => {
      signal.addEventListener('abort', (event) => events.push(`listener ${event.type}`), { once: true });
    });
    expect(made).toBe(1);
    const onabort = () => events.push('onabort');
    signal.onabort = onabort;
    expect(signal.onabort).toBe(onabort); // a value given comes back as it was
    expect(signal.reason).toBeUndefined();
    expect(() => signal.throwIfAborted()).not.toThrow();
    context.abort();
    expect(events).toEqual(['listener abort', 'onabort']);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).name).toBe('AbortError');
    expect(() => signal.throwIfAborted()).toThrow(expect.objectContaining({ name: 'AbortError' }));
  });

  it('R31: a signal first used after the abort is aborted (read late, as an async tool does)', () => {
    const context = new LazyAbort();
    context.abort();
    const { signal } = context;
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).name).toBe('AbortError');
    const fired = jest.fn();
    signal.addEventListener('abort', fired);
    expect(fired).not.toHaveBeenCalled(); // as any aborted signal: no second event
  });

  it('R31: the stand-in serves the platform as a signal: AbortSignal.any, timers, events.once', async () => {
    const context = new LazyAbort();
    const { signal } = context;
    const any = AbortSignal.any([signal]);
    const timer = sleep(60_000, 'never', { signal });
    const emitted = once(new EventEmitter(), 'never', { signal });
    expect(any.aborted).toBe(false);
    context.abort();
    expect(any.aborted).toBe(true);
    await expect(timer).rejects.toMatchObject({ name: 'AbortError' });
    await expect(emitted).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('R31: fetch hears the stand-in: aborting the context aborts a request still waiting for its reply', async () => {
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

  it('R31: the stand-in can be inspected, its keys listed and its properties set like a real signal', () => {
    const { signal } = new LazyAbort();
    expect(() => inspect(signal)).not.toThrow();
    expect(() => Object.getOwnPropertyDescriptors(signal)).not.toThrow();
    expect(Object.keys(signal)).toEqual(Object.keys(new AbortController().signal));
    expect('aborted' in signal && 'addEventListener' in signal).toBe(true);
    (signal as AbortSignal & { mark?: string }).mark = 'set';
    expect((signal as AbortSignal & { mark?: string }).mark).toBe('set');
    expect(Object.prototype.toString.call(signal)).toBe('[object AbortSignal]');
    expect(signal.constructor).toBe(AbortSignal);
    setMaxListeners(20, signal); // Node's check of an EventTarget reads its constructor
    expect(getMaxListeners(signal)).toBe(20);
  });

  it('R31: where the platform refuses a stand-in (a browser checks its own signals), the signal is a real one, made on read', () => {
    const aborted = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted')!;
    // a browser's getter runs only on its own objects, never through a Proxy
    Object.defineProperty(AbortSignal.prototype, 'aborted', {
      ...aborted,
      get(this: AbortSignal) {
        if (types.isProxy(this)) throw new TypeError('Illegal invocation');
        return aborted.get!.call(this) as boolean;
      },
    });
    try {
      let Fresh: typeof LazyAbort | undefined;
      jest.isolateModules(() => {
        Fresh = (require('../../src/util/lazy-abort.js') as { LazyAbort: typeof LazyAbort }).LazyAbort;
      });
      const context = new Fresh!();
      const made = controllersMadeBy(() => void context.signal);
      const { signal } = context;
      expect(made).toBe(1);
      expect(types.isProxy(signal)).toBe(false);
      expect(context.signal).toBe(signal);
      expect(Fresh!.listen(signal, () => {})).toBeUndefined(); // heard as any signal is
      context.abort();
      expect(signal.aborted).toBe(true);
    } finally {
      Object.defineProperty(AbortSignal.prototype, 'aborted', aborted);
    }
  });

  it('R31, R11: an inner loop given a context signal makes no AbortController, and the context aborting aborts the loop', async () => {
    const context = new LazyAbort();
    // a model that starts its reply and never ends it: only the abort ends the turn
    const provider = () => new Observable<ProviderEvent>((subscriber) => subscriber.next({ type: 'message_start' }));
    let end: Promise<unknown> | undefined;
    const made = controllersMadeBy(() => {
      end = lastValueFrom(runEventedToolLoop({ provider, registry: new ToolRegistry(), messages: [{ role: 'user', content: 'hi' }], signal: context.signal }));
    });
    expect(made).toBe(0);
    context.abort();
    await expect(end).resolves.toMatchObject({ type: 'loop_end', reason: 'aborted' });
  });
});
