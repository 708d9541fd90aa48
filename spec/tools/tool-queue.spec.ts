import { Observable, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { ToolRegistry } from '../../src/index.js';
import { ToolQueue } from '../../src/tools/tool-queue.js';
import { callOf, tool } from '../support/events.js';

describe('ToolQueue (R3)', () => {
  function setup(concurrency: number, work: Record<string, Observable<string>>) {
    const registry = new ToolRegistry();
    for (const [name, observable] of Object.entries(work)) registry.register(tool(name, () => observable));
    const finished: string[] = [];
    let idle = 0;
    const queue = new ToolQueue(registry, concurrency, Infinity, {
      progress: (index, progress) => {
        if (progress.type === 'settled') finished.push(`${index}:${progress.message.content}`);
      },
      idle: () => idle++,
    });
    return { queue, finished, idle: () => idle };
  }

  it('concurrency 1 runs waiting calls first in, first out', () => {
    new TestScheduler((a, b) => expect(a).toEqual(b)).run(({ cold, expectSubscriptions, flush }) => {
      const work = { a: cold<string>('--(a|)'), b: cold<string>('--(b|)'), c: cold<string>('--(c|)'), d: cold<string>('--(d|)') };
      const { queue, finished, idle } = setup(1, work);
      ['a', 'b', 'c', 'd'].forEach((name, index) => queue.add(callOf(name, name), index));
      flush();
      expectSubscriptions(work.a.subscriptions).toBe('^-!');
      expectSubscriptions(work.b.subscriptions).toBe('--^-!');
      expectSubscriptions(work.c.subscriptions).toBe('----^-!');
      expectSubscriptions(work.d.subscriptions).toBe('------^-!');
      expect(finished).toEqual(['0:a', '1:b', '2:c', '3:d']);
      expect(idle()).toBe(1);
    });
  });

  it('stop() tears down running tools and drops waiting ones', () => {
    new TestScheduler((a, b) => expect(a).toEqual(b)).run(({ cold, expectSubscriptions, flush }) => {
      const work = { a: cold<string>('-----(a|)'), b: cold<string>('-----(b|)') };
      const { queue, finished, idle } = setup(1, work);
      queue.add(callOf('a', 'a'), 0);
      queue.add(callOf('b', 'b'), 1);
      timer(2).subscribe(() => queue.stop());
      flush();
      expectSubscriptions(work.a.subscriptions).toBe('^-!');
      expectSubscriptions(work.b.subscriptions).toBe([]);
      expect(finished).toEqual([]);
      expect(queue.idle).toBe(true);
      expect(idle()).toBe(0);
    });
  });
});
