/**
 * An id for a call the API sent without one (a compatible server's Chat Completions, a Responses server with no
 * `call_id`, Gemini's Developer API): the library's, `call_<time>_<position>`, unique within a reply and unlikely to
 * meet another reply's, so that a result can name its call (R4).
 *
 * ```ts
 * generatedCallId(0); // 'call_mbx3k2a1_0'
 * ```
 */
export function generatedCallId(position: number): string {
  return `call_${Date.now().toString(36)}_${position}`;
}
