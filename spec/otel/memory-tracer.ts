/**
 * A tracer whose spans stay in memory (sdk-trace-base's InMemorySpanExporter behind a SimpleSpanProcessor),
 * and a synchronous context manager, so that specs read the spans a run made: names, kinds, parents,
 * attributes, statuses, and how often each was ended.
 */
import { type Context, type ContextManager, type Span, type SpanOptions, type Tracer, ROOT_CONTEXT, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface MemoryTracer {
  tracer: Tracer;
  /** The ended spans, in the order they ended. */
  finished(): ReadableSpan[];
  /** Every span started, with how many times `end()` was called on it. */
  ends(): { name: string; ends: number }[];
  /** The finished spans as a tree of lines: `name (KIND) [status]`, children indented under their parent. */
  tree(): string[];
}

export function memoryTracer(): MemoryTracer {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const inner = provider.getTracer('rx-tool-loop-spec');
  const started: { name: string; id: string; ends: number }[] = [];
  // counts each end() called on a span: the SDK ignores a second one, a spec must not
  const counted = (name: string, span: Span): Span => {
    const entry = { name, id: span.spanContext().spanId, ends: 0 };
    started.push(entry);
    const end = span.end.bind(span);
    span.end = (time) => {
      entry.ends++;
      end(time);
    };
    return span;
  };
  const tracer: Tracer = {
    startSpan: (name: string, options?: SpanOptions, context?: Context) => counted(name, inner.startSpan(name, options, context)),
    startActiveSpan: inner.startActiveSpan.bind(inner) as Tracer['startActiveSpan'],
  };
  const finished = () => exporter.getFinishedSpans();
  return {
    tracer,
    finished,
    ends: () => started.map(({ name, ends }) => ({ name, ends })),
    // in start order: the clock's ties (spans started in one frame) do not reorder them
    tree: () => treeOf(finished(), started.map((entry) => entry.id)),
  };
}

const kinds: Record<number, string> = { [SpanKind.INTERNAL]: 'INTERNAL', [SpanKind.CLIENT]: 'CLIENT', [SpanKind.SERVER]: 'SERVER' };

function line(span: ReadableSpan): string {
  const status = span.status.code === SpanStatusCode.ERROR ? ` [ERROR: ${span.status.message ?? ''}]` : '';
  return `${span.name} (${kinds[span.kind] ?? span.kind})${status}`;
}

/** Children under their parent, each level in `order` (span ids in start order). */
function treeOf(spans: readonly ReadableSpan[], order: readonly string[]): string[] {
  const ids = new Set(spans.map((span) => span.spanContext().spanId));
  const rank = (span: ReadableSpan) => order.indexOf(span.spanContext().spanId);
  const byStart = spans.slice().sort((a, b) => rank(a) - rank(b));
  const lines: string[] = [];
  const visit = (parent: string | undefined, depth: number) => {
    for (const span of byStart) {
      const parentId = span.parentSpanContext?.spanId;
      const isRoot = parentId === undefined || !ids.has(parentId);
      if (parent === undefined ? isRoot : parentId === parent) {
        lines.push(`${'  '.repeat(depth)}${line(span)}`);
        visit(span.spanContext().spanId, depth + 1);
      }
    }
  };
  visit(undefined, 0);
  return lines;
}

/** The span named `name` (the only one, or the n-th to end). */
export function spanNamed(spans: readonly ReadableSpan[], name: string, n = 0): ReadableSpan {
  const found = spans.filter((span) => span.name === name)[n];
  if (found === undefined) throw new Error(`no span ${name} #${n} among ${spans.map((span) => span.name).join(', ')}`);
  return found;
}

/** The span that `span` is the child of, among `spans`. */
export function parentOf(spans: readonly ReadableSpan[], span: ReadableSpan): ReadableSpan | undefined {
  return spans.find((candidate) => candidate.spanContext().spanId === span.parentSpanContext?.spanId);
}

/** A context manager for synchronous code (a stack): enough for `context.with` in specs. */
export class StackContextManager implements ContextManager {
  private current: Context = ROOT_CONTEXT;
  active(): Context {
    return this.current;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const before = this.current;
    this.current = context;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.current = before;
    }
  }
  bind<T>(_context: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.current = ROOT_CONTEXT;
    return this;
  }
}

