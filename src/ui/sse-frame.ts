/** The comment a stream sends while it has nothing else to say, so that proxies and clients keep it open. */
export const HEARTBEAT = ': keep-alive\n\n';

/** What the AI SDK's UI message stream sends after its last chunk. */
export const DONE = 'data: [DONE]\n\n';

/**
 * One event on the wire: `id:`, an `event:` name when it has one, and its data as `data:` lines — a line end
 * inside the data starts another `data:` line, so any text arrives whole.
 *
 * ```ts
 * sseFrame('7', '{"type":"text_delta"}');  // 'id: 7\ndata: {"type":"text_delta"}\n\n'
 * sseFrame(undefined, 'a\nb', 'error');     // 'event: error\ndata: a\ndata: b\n\n'
 * ```
 */
export function sseFrame(id: string | undefined, data: string, event?: string): string {
  let frame = id === undefined ? '' : `id: ${id}\n`;
  if (event !== undefined) frame += `event: ${event}\n`;
  // JSON never holds a raw line end: the common case is one line
  if (data.indexOf('\n') < 0 && data.indexOf('\r') < 0) return `${frame}data: ${data}\n\n`;
  for (const line of data.split(/\r\n|\r|\n/)) frame += `data: ${line}\n`;
  return `${frame}\n`;
}
