/**
 * Open defects that the properties step around. A defect the suite finds gets a minimal test in
 * spec/properties/defects.spec.ts, marked `it.failing`, and a flag here; while the flag is true the
 * properties leave out the one check (or case) that would fail on it, so that everything else stays
 * checked and green. When the library is fixed, the `it.failing` test fails: make it a plain `it` and set
 * the flag to false, so that the properties check that case again.
 *
 * D1–D5 are fixed (all flags false); the flags stay as the places where those checks are wired in.
 */
export const KNOWN_DEFECTS = {
  /** D1: a tool that reads `context.signal` for the first time after it was torn down gets a signal that is not aborted (src/abort-signal.ts LazyAbort). */
  lateSignalNotAborted: false,
  /**
   * D2: a cancellation that comes while the loop is calling out is not honoured at once: an unsubscribe
   * while `turn_start` is delivered (the provider is still called), or during the loop's synchronous
   * start (the provider is called, and its tool calls still run their tools); an abort or unsubscribe from
   * inside the provider function (its Observable is still subscribed) — src/run-turn.ts,
   * src/run-evented-tool-loop.ts.
   */
  unsubscribeNotHonouredAtOnce: false,
  /**
   * D5: when the caller's signal aborts while a tool is still inside its synchronous subscribe (its handler
   * aborts, or the consumer aborts on its synchronous `tool_update`), the tool's own result comes out as a
   * second `tool_result` after `loop_end` (src/run-turn.ts, src/tool-queue.ts). While true, checkEnds
   * tolerates such late `tool_update`/`tool_result` events for calls the history says were aborted.
   */
  resultAfterLoopEnd: false,
};
