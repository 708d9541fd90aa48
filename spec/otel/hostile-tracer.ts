/**
 * A tracer that throws (O3 exactly): from `startSpan` and from any span method, at moments a seeded
 * generator picks, `end` included (before or after the span really ended). It counts, for every span it
 * started, how many times `end()` was called on it — a throwing call counts: the caller made it.
 */
import type { Span, SpanOptions, Context, Tracer } from '@opentelemetry/api';
import { memoryTracer } from './memory-tracer.js';

/** The methods that may throw: the tracer's `startSpan` and every span method traceLoop could call. */
export const HOSTILE_METHODS = [
  'startSpan',
  'setAttribute',
  'setAttributes',
  'setStatus',
  'addEvent',
  'addLink',
  'addLinks',
  'recordException',
  'updateName',
  'isRecording',
  'spanContext',
  'end',
] as const;

export type HostileMethod = (typeof HOSTILE_METHODS)[number];

export interface Hostility {
  /** Which methods may throw. */
  methods: readonly HostileMethod[];
  /** The chance that one call of such a method throws. */
  rate: number;
  seed: number;
}

export interface HostileTracer {
  tracer: Tracer;
  /** Every span started, with how many times `end()` was called on it. */
  ends(): { name: string; ends: number }[];
  /** How many times it threw. */
  thrown(): number;
}

export function hostileTracer(hostility: Hostility): HostileTracer {
  const memory = memoryTracer();
  const random = mulberry32(hostility.seed);
  const hostile = new Set<string>(hostility.methods);
  let thrown = 0;
  const maybeThrow = (method: string) => {
    if (hostile.has(method) && random() < hostility.rate) {
      thrown++;
      throw new Error(`hostile tracer: ${method} threw`);
    }
  };
  const started: { name: string; ends: number }[] = [];
  const tracer: Tracer = {
    startSpan: (name: string, options?: SpanOptions, context?: Context) => {
      maybeThrow('startSpan');
      const span = memory.tracer.startSpan(name, options, context);
      const entry = { name, ends: 0 };
      started.push(entry);
      return hostileSpan(span, maybeThrow, random, () => entry.ends++);
    },
    startActiveSpan: memory.tracer.startActiveSpan,
  };
  return { tracer, ends: () => started.map((entry) => ({ ...entry })), thrown: () => thrown };
}

function hostileSpan(span: Span, maybeThrow: (method: string) => void, random: () => number, ended: () => void): Span {
  const target = span as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const method of HOSTILE_METHODS) {
    if (method === 'startSpan' || typeof target[method] !== 'function') continue;
    const real = target[method]!.bind(span);
    target[method] =
      method === 'end'
        ? (...args: unknown[]) => {
            ended();
            // a throw before the span ended, or after
            if (random() < 0.5) maybeThrow('end');
            const result = real(...args);
            maybeThrow('end');
            return result;
          }
        : (...args: unknown[]) => {
            maybeThrow(method);
            return real(...args);
          };
  }
  return span;
}

/** A small seeded generator, so that a failing run replays from its seed. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
