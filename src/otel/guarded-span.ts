import { type Attributes, type AttributeValue, type Context, type Span, type SpanOptions, type Tracer, INVALID_SPAN_CONTEXT, SpanStatusCode, diag, isSpanContextValid, trace } from '@opentelemetry/api';

/**
 * One span of {@link traceLoop}, held so that the tracer can never hurt the run (O3): every call into the
 * tracer and its span is guarded — a throw is reported to OpenTelemetry's `diag` logger and the run goes on —
 * and `end` is called exactly once, whatever threw before it (a throwing `end` counts as the one call).
 */
export class GuardedSpan {
  private ended = false;

  private constructor(
    /** The tracer's own span: the parent of the spans under it, in a context (`trace.setSpan`). */
    readonly span: Span,
    /** Asked once, at start: a span that records nothing (unsampled, or no SDK) gets no attributes built (O4). */
    readonly recording: boolean,
    /** No SDK behind the tracer: the span records nothing and has no valid context. */
    readonly off: boolean,
  ) {}

  /** Starts a span; a `startSpan` that throws gives a span that records nothing and is not the tracer's to end. */
  static start(tracer: Tracer, name: string, options: SpanOptions, parent: Context | undefined): GuardedSpan {
    let span: Span;
    try {
      span = tracer.startSpan(name, options, parent);
    } catch (error) {
      reported(error, 'startSpan');
      return new GuardedSpan(trace.wrapSpanContext(INVALID_SPAN_CONTEXT), false, true);
    }
    let recording = false;
    let off = false;
    try {
      recording = span.isRecording() === true;
      off = !recording && !isSpanContextValid(span.spanContext());
    } catch (error) {
      reported(error, 'isRecording');
    }
    return new GuardedSpan(span, recording, off);
  }

  setAttribute(key: string, value: AttributeValue): void {
    try {
      this.span.setAttribute(key, value);
    } catch (error) {
      reported(error, 'setAttribute');
    }
  }

  setAttributes(attributes: Attributes): void {
    try {
      this.span.setAttributes(attributes);
    } catch (error) {
      reported(error, 'setAttributes');
    }
  }

  /** A moment of the span's life (H8: a call waiting for a person). */
  addEvent(name: string, attributes: Attributes): void {
    try {
      this.span.addEvent(name, attributes);
    } catch (error) {
      reported(error, 'addEvent');
    }
  }

  /** Status ERROR with `message`. */
  fail(message: string): void {
    try {
      this.span.setStatus({ code: SpanStatusCode.ERROR, message });
    } catch (error) {
      reported(error, 'setStatus');
    }
  }

  /** Ends the span, once: a second call does nothing. */
  end(time?: number): void {
    if (this.ended) return;
    this.ended = true;
    try {
      this.span.end(time);
    } catch (error) {
      reported(error, 'end');
    }
  }
}

/** A tracer's throw is the tracer's problem, told where OpenTelemetry tells its own; even a throwing logger is survived. */
export function reported(error: unknown, where: string): void {
  try {
    diag.error(`rx-tool-loop/otel: the tracer threw from ${where}; the run goes on`, error);
  } catch {
    // nothing left to tell it to
  }
}
