import { onAbort } from '../../util/abort-signal.js';
import { errorText } from '../../util/values.js';
import type { FailureKind } from './failure.js';

/**
 * A failure whose message is already worded for `message_end.errorMessage`: `throw new WireError('error in the stream: Overloaded')`;
 * `failure` says what kind of failure it is (L1), a `protocol` one unless said.
 */
export class WireError extends Error {
  override name = 'WireError';

  constructor(
    message: string,
    readonly failure: FailureKind = { kind: 'protocol' },
  ) {
    super(message);
  }
}

/**
 * The text of `message_end.errorMessage` for a failure: a `WireError`'s message as it is, anything else
 * described with its causes; every secret replaced by `[redacted]` (P4, `redact`).
 *
 * ```ts
 * failureText(new WireError('bad key sk-test-12345678'), ['sk-test-12345678']); // 'bad key [redacted]'
 * ```
 */
export function failureText(error: unknown, secrets: readonly string[]): string {
  return redact(error instanceof WireError ? error.message : errorTextWithCauses(error), secrets);
}

/**
 * The API's own words from an error response: `error.message` in JSON (OpenAI, Anthropic and most others),
 * else the text. When `signal` aborts first, it stops waiting for the body (a custom fetch may not tie the
 * body to the signal): the status text has to do.
 */
export async function responseMessage(response: Response, signal?: AbortSignal): Promise<string> {
  return (await responseWords(response, signal)).message;
}

/** {@link responseMessage}, and the body's text it was read from (where an API says more: Google's RetryInfo). */
export async function responseWords(response: Response, signal?: AbortSignal): Promise<{ message: string; text: string }> {
  let text = '';
  try {
    text = (await untilAborted(response.text(), signal)).trim();
  } catch {
    // the body broke off, or took too long: the status has to do
  }
  return { message: messageOf(text) ?? (text !== '' ? text.slice(0, 1000) : response.statusText || 'no message'), text };
}

/** `promise`, or a rejection as soon as `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const stopListening = onAbort(signal, () => reject(new Error('aborted')));
    promise.then(resolve, reject).finally(stopListening);
  });
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

/**
 * An error's message and its causes: `fetch failed (connect ECONNREFUSED 127.0.0.1:9)`; an error that
 * throws when it is read (a hostile `fetch`'s) is `an error that cannot be read`.
 */
export function errorTextWithCauses(error: unknown): string {
  try {
    return describeCauses(error);
  } catch {
    return 'an error that cannot be read';
  }
}

function describeCauses(error: unknown): string {
  // read by shape, not `instanceof Error`: fetch's errors may come from another realm (a test VM, an iframe)
  let text = errorText(error);
  let cause = nextCause(error);
  for (let depth = 0; cause !== undefined && depth < 3; depth++) {
    const errors: unknown = (cause as { errors?: unknown }).errors;
    text += ` (${Array.isArray(errors) && errors.length > 0 ? errors.map(errorText).join('; ') : errorText(cause)})`;
    cause = nextCause(cause);
  }
  return text;
}

/** `error.cause`, read by shape (not R25's `causeOf`, which keeps a failure's cause as JSON). */
function nextCause(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { cause?: unknown }).cause : undefined;
}

/** The shortest secret that is redacted: a shorter one would take letters out of ordinary words (P2). */
export const MIN_SECRET_LENGTH = 8;

/**
 * `text` with each secret of at least `MIN_SECRET_LENGTH` characters replaced by `[redacted]` where it
 * stands as a whole token: not inside a word, so neither a letter, a digit nor `_` touches it (P2). The
 * longest secrets go first, so that one inside another leaves nothing of the other behind.
 *
 * ```ts
 * redact('bad key sk-test-12345678, "sk-test-12345678"', ['sk-test-12345678']); // 'bad key [redacted], "[redacted]"'
 * redact('the stream broke off', ['k']);                                        // 'the stream broke off': too short
 * redact('xsk-test-12345678', ['sk-test-12345678']);                            // 'xsk-test-12345678': inside a word
 * ```
 */
export function redact(text: string, secrets: readonly string[]): string {
  const redacted = secrets.filter((secret) => secret.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  return redacted.reduce(redactToken, text);
}

function redactToken(text: string, secret: string): string {
  let result = '';
  let from = 0;
  for (let at = text.indexOf(secret); at >= 0; at = text.indexOf(secret, at + 1)) {
    if (at < from) continue; // overlaps the occurrence just replaced
    if (isWordBefore(text, at) || isWordAt(text, at + secret.length)) continue;
    result += `${text.slice(from, at)}[redacted]`;
    from = at + secret.length;
  }
  return from === 0 ? text : result + text.slice(from);
}

const WORD = /[\p{L}\p{N}\p{M}_]/u;

function isWordAt(text: string, at: number): boolean {
  const code = text.codePointAt(at);
  return code !== undefined && WORD.test(String.fromCodePoint(code));
}

function isWordBefore(text: string, at: number): boolean {
  if (at === 0) return false;
  const low = text.charCodeAt(at - 1);
  // the character before may be the second half of a surrogate pair: read the whole code point
  return isWordAt(text, at >= 2 && low >= 0xdc00 && low <= 0xdfff ? at - 2 : at - 1);
}
