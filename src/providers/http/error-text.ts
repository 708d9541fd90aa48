import { errorText } from '../../util/values.js';

/** A failure whose message is already worded for `message_end.errorMessage`: `throw new WireError('HTTP 401: invalid x-api-key')`. */
export class WireError extends Error {
  override name = 'WireError';
}

/**
 * The text of `message_end.errorMessage` for a failure: a `WireError`'s message as it is, anything else
 * described with its causes; every secret replaced by `[redacted]` (P4).
 *
 * ```ts
 * failureText(new WireError('HTTP 401: bad key sk-123'), ['sk-123']); // 'HTTP 401: bad key [redacted]'
 * ```
 */
export function failureText(error: unknown, secrets: readonly string[]): string {
  return redact(error instanceof WireError ? error.message : describe(error), secrets);
}

/** The API's own words from an error response: `error.message` in JSON (OpenAI, Anthropic and most others), else the text. */
export async function responseMessage(response: Response): Promise<string> {
  let text = '';
  try {
    text = (await response.text()).trim();
  } catch {
    // the body broke off: the status has to do
  }
  return messageOf(text) ?? (text !== '' ? text.slice(0, 1000) : response.statusText || 'no message');
}

/**
 * `error.message`, `error` (a string) or `message` of a JSON text, if it has one.
 *
 * ```ts
 * messageOf('{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}'); // 'invalid x-api-key'
 * messageOf('<html>Bad Gateway</html>'); // undefined
 * ```
 */
export function messageOf(text: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { error, message } = value as { error?: unknown; message?: unknown };
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null) {
    const inner = (error as { message?: unknown }).message;
    if (typeof inner === 'string') return inner;
  }
  return typeof message === 'string' ? message : undefined;
}

/** An error's message and its causes: `fetch failed (connect ECONNREFUSED 127.0.0.1:9)`. */
export function describe(error: unknown): string {
  // read by shape, not `instanceof Error`: fetch's errors may come from another realm (a test VM, an iframe)
  let text = errorText(error);
  let cause = causeOf(error);
  for (let depth = 0; cause !== undefined && depth < 3; depth++) {
    const errors: unknown = (cause as { errors?: unknown }).errors;
    text += ` (${Array.isArray(errors) && errors.length > 0 ? errors.map(errorText).join('; ') : errorText(cause)})`;
    cause = causeOf(cause);
  }
  return text;
}

function causeOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { cause?: unknown }).cause : undefined;
}

/** `text` with every non-empty secret replaced by `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  return secrets.reduce((result, secret) => (secret === '' ? result : result.split(secret).join('[redacted]')), text);
}
