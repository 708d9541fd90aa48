import type { Attachment } from '../types.js';
import { shown } from './values.js';

/**
 * Attachments (F1–F4), asked once for the whole library: the check of their shape, their size, and the
 * line that stands for one where no bytes can go (a log line, an API that does not take it).
 */

// standard base64, padded: what every model API takes as inline data
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const TYPES: ReadonlySet<unknown> = new Set(['image', 'audio', 'file']);

/**
 * F1: why `list` is not a valid `attachments` array, as `attachments[1].data is not valid base64 (got …)`, or
 * `undefined` when it is one. Each is an object with a known `type`, a string `mimeType`, and exactly one of `data`
 * (standard base64) and `url` (`http:`, `https:` or `data:`); `name`, when given, is a string.
 */
export function attachmentsProblem(list: unknown): string | undefined {
  if (!Array.isArray(list)) return `attachments must be an array (got ${shown(list)})`;
  for (let index = 0; index < list.length; index++) {
    const at = `attachments[${index}]`;
    const item: unknown = list[index];
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return `${at} must be an object (got ${shown(item)})`;
    const { type, mimeType, data, url, name } = item as Partial<Record<keyof Attachment, unknown>>;
    if (!TYPES.has(type)) return `${at}.type must be 'image', 'audio' or 'file' (got ${shown(type)})`;
    if (typeof mimeType !== 'string' || mimeType === '') return `${at}.mimeType must be a non-empty string (got ${shown(mimeType)})`;
    if ((data === undefined) === (url === undefined)) return `${at} must have exactly one of data (base64) and url`;
    if (data !== undefined && (typeof data !== 'string' || !BASE64.test(data))) return `${at}.data must be standard base64 text (got ${shown(data)})`;
    if (url !== undefined && (typeof url !== 'string' || !/^(?:https?:\/\/|data:)/i.test(url))) {
      return `${at}.url must be an http:, https: or data: URL (got ${shown(url)})`;
    }
    if (name !== undefined && typeof name !== 'string') return `${at}.name must be a string (got ${shown(name)})`;
  }
  return undefined;
}

/**
 * F3, E1: an `image` or `audio` content block, or an embedded resource's blob (`{ type: 'resource', resource: { uri,
 * mimeType?, blob } }`), as an attachment — MCP's content and ACP's prompt blocks share these shapes; `undefined`
 * for any other block. A blob's type is its MIME type's (`image/*`, `audio/*`, else `file`;
 * `application/octet-stream` when it has none) and `blobName` names it from its URI (no name when that is `''`).
 * Unchecked: each caller decides what an invalid one is ({@link attachmentsProblem}).
 */
export function contentAttachment(block: unknown, blobName: (uri: string) => string): Attachment | undefined {
  if (typeof block !== 'object' || block === null) return undefined;
  const { type, mimeType, data, resource } = block as { type?: unknown; mimeType?: unknown; data?: unknown; resource?: unknown };
  if (type === 'image' || type === 'audio') return { type, mimeType: mimeType as string, data: data as string };
  if (type !== 'resource' || typeof resource !== 'object' || resource === null || !('blob' in resource)) return undefined;
  const blob = resource as { uri?: unknown; mimeType?: unknown; blob: unknown };
  const mime = typeof blob.mimeType === 'string' ? blob.mimeType : undefined;
  const kind = mime?.startsWith('image/') ? 'image' : mime?.startsWith('audio/') ? 'audio' : 'file';
  const attachment: Attachment = { type: kind, mimeType: mime ?? 'application/octet-stream', data: blob.blob as string };
  const name = typeof blob.uri === 'string' ? blobName(blob.uri) : '';
  if (name !== '') attachment.name = name;
  return attachment;
}

/** The image types every model API here takes as data (OpenAI, Anthropic): others are a line, never a 400 (F2). */
export const WEB_IMAGE_TYPES: ReadonlySet<string> = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/** F2: the line for an image of another type, given as data. */
export const IMAGE_TYPES_ONLY = 'not sent, API takes jpeg, png, gif and webp images only';

/** How many bytes a base64 text decodes to, without decoding it. */
export function base64Bytes(data: string): number {
  let length = data.length;
  let padding = 0;
  while (padding < 2 && length > 0 && data.charCodeAt(length - 1) === 0x3d /* = */) {
    length--;
    padding++;
  }
  // whitespace (MCP servers may wrap) holds no bytes
  let spaces = 0;
  for (let i = 0; i < length; i++) if (data.charCodeAt(i) <= 0x20) spaces++;
  return Math.floor(((length - spaces) * 3) / 4);
}

/** A `data:` URL's parts, when it is base64 (`data:image/png;base64,…`); `undefined` for any other URL. */
export function dataUrlParts(url: string): { mimeType: string; data: string } | undefined {
  const match = /^data:([^;,]*)(?:;[^,]*)?;base64,/i.exec(url);
  return match === null ? undefined : { mimeType: match[1]!, data: url.slice(match[0].length) };
}

/**
 * The attachment's bytes as base64 when it has them: its `data`, or a `data:` URL's — base64 as it is, text
 * (percent-encoded, `data:text/plain,h%c3%a9`) encoded here; `undefined` for a web URL.
 */
export function inlineData(attachment: Attachment): string | undefined {
  if (attachment.data !== undefined) return attachment.data;
  const { url } = attachment;
  if (url === undefined || !/^data:/i.test(url)) return undefined;
  const base64 = dataUrlParts(url)?.data;
  if (base64 !== undefined) return base64;
  try {
    let binary = '';
    for (const byte of new TextEncoder().encode(decodeURIComponent(url.slice(url.indexOf(',') + 1)))) binary += String.fromCharCode(byte);
    return btoa(binary);
  } catch {
    return undefined; // a malformed escape: no bytes to send, the URL goes as it is
  }
}

/** The attachment as a URL: its own, or its data as `data:MIME;base64,…`. */
export function attachmentUrl(attachment: Attachment): string {
  return attachment.url ?? `data:${attachment.mimeType};base64,${attachment.data ?? ''}`;
}

/**
 * The line that stands for an attachment (F4, F2): `[image image/png, 1234 bytes]` (the decoded size), or
 * `[file application/pdf, https://example.com/a.pdf]` for a web URL; `why`, when given, follows after `: `
 * (`[audio audio/wav, 48213 bytes: not sent, API takes no audio]`).
 *
 * ```ts
 * attachmentLine({ type: 'image', mimeType: 'image/png', data: 'iVBORw0K' }); // '[image image/png, 6 bytes]'
 * ```
 */
export function attachmentLine(attachment: Attachment, why?: string): string {
  const data = inlineData(attachment);
  const where = data !== undefined ? `${base64Bytes(data)} bytes` : (attachment.url ?? '');
  return `[${attachment.type} ${attachment.mimeType}, ${where}${why === undefined ? '' : `: ${why}`}]`;
}

/** The lines of a message's attachments, each after a space: what a one-line view (describeEvent) appends. */
export function attachmentLines(attachments: readonly Attachment[] | undefined): string {
  if (attachments === undefined) return '';
  let text = '';
  for (const attachment of attachments) text += ` ${attachmentLine(attachment)}`;
  return text;
}
