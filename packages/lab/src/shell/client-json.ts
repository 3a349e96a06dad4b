import { unstorableText } from '@outbox/core';
import { OutboxError } from '@outbox/core';

/** One thing wrong with a request, as a client needs it to fix the request. */
export interface ClientInputIssue {
  /** Dotted path of the value ('' for the body itself), as zod issues name it. */
  path: string;
  message: string;
  code:
    | 'invalid_json'
    | 'duplicate_key'
    | 'too_deep'
    | 'unstorable_text'
    | 'unsafe_number'
    | 'not_serializable';
}

/**
 * A request body that is not JSON this API accepts. `kind` picks the status: charset
 * → 415, the others → 400 (encoding: not UTF-8; syntax: not JSON; content: JSON with
 * duplicate keys, too deep, text PostgreSQL cannot store or numbers past 2^53).
 */
export class ClientJsonError extends OutboxError {
  constructor(
    readonly kind: 'charset' | 'encoding' | 'syntax' | 'content',
    message: string,
    readonly issues: ClientInputIssue[] = [],
  ) {
    super(message);
  }
}

/** Deeper than this is refused (every body of this project is 1 or 2 deep). */
export const DEFAULT_MAX_JSON_DEPTH = 32;
// A client needs the first few problems, not ten thousand of one kind.
const MAX_ISSUES = 10;

export interface ClientJsonOptions {
  /** The request's Content-Type header, for its charset parameter. */
  contentType?: string | undefined;
  maxDepth?: number;
}

const CHARSET = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i;
// fatal: bytes that are not UTF-8 throw instead of becoming U+FFFD. Without the
// `stream` option decode() keeps no state between calls, so one decoder serves all.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes and parses a JSON request body strictly, so that what passes is what the
 * client meant and what PostgreSQL can store:
 * - UTF-8 only (RFC 8259 §8.1): another charset is a 415, bytes that are not UTF-8
 *   a 400 (a lenient decoder would turn them into U+FFFD silently); a BOM is skipped.
 * - An object or an array at the top (body-parser's strict mode).
 * - No key twice in one object: JSON.parse keeps the last one, a proxy, a WAF or a
 *   log reader may keep the first, so the request would mean two things.
 * - At most `maxDepth` nested objects and arrays (JSON.stringify of a deep value,
 *   e.g. for the Idempotency-Key hash, overflows the stack at a few thousand).
 * - No NUL and no unpaired surrogate in any key or string, wherever it is: PostgreSQL
 *   refuses both.
 * - Numbers finite and within ±(2^53−1): past that JSON.parse rounds (…993 → …992)
 *   or returns Infinity, and the value checked is not the value sent.
 * An empty body is `{}`, as body-parser has it.
 */
export function parseClientJson(body: Uint8Array, options: ClientJsonOptions = {}): unknown {
  const match = options.contentType ? CHARSET.exec(options.contentType) : null;
  const charset = (match?.[1] ?? match?.[2])?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new ClientJsonError(
      'charset',
      `unsupported charset "${charset}": JSON bodies are UTF-8 (RFC 8259)`,
    );
  }
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    throw new ClientJsonError('encoding', 'request body is not valid UTF-8');
  }
  if (text.length === 0) return {};
  const first = /\S/.exec(text)?.[0];
  if (first !== '{' && first !== '[') {
    throw new ClientJsonError('syntax', 'malformed JSON body', [
      { path: '', message: 'the body must be a JSON object or array', code: 'invalid_json' },
    ]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ClientJsonError('syntax', 'malformed JSON body', [
      { path: '', message: (error as Error).message, code: 'invalid_json' },
    ]);
  }
  const issues = inspectJson(text, options.maxDepth ?? DEFAULT_MAX_JSON_DEPTH);
  if (issues.length > 0) throw new ClientJsonError('content', 'invalid request body', issues);
  return value;
}

interface Frame {
  object: boolean;
  /** The member name or element index being read: this frame's part of the path. */
  at: string | number;
  expectKey: boolean;
  keys: Set<string>;
}

/**
 * Walks JSON text that JSON.parse has accepted (so it is well formed) and lists what
 * JSON.parse lets through: duplicate keys, depth, unstorable text, unsafe numbers.
 * Iterative, so a deep body cannot overflow the stack here either.
 */
function inspectJson(text: string, maxDepth: number): ClientInputIssue[] {
  const issues: ClientInputIssue[] = [];
  const stack: Frame[] = [];
  const path = () => stack.map((f) => f.at).join('.');
  let i = 0;
  while (i < text.length && issues.length < MAX_ISSUES) {
    const ch = text[i] as string;
    if (ch === '{' || ch === '[') {
      if (stack.length >= maxDepth) {
        issues.push({
          path: path(),
          message: `nested deeper than ${maxDepth} objects and arrays`,
          code: 'too_deep',
        });
        break;
      }
      const object = ch === '{';
      stack.push({ object, at: object ? '' : 0, expectKey: object, keys: new Set() });
      i += 1;
    } else if (ch === '}' || ch === ']') {
      stack.pop();
      i += 1;
    } else if (ch === ',') {
      const top = stack[stack.length - 1] as Frame;
      if (top.object) top.expectKey = true;
      else top.at = (top.at as number) + 1;
      i += 1;
    } else if (ch === '"') {
      const end = endOfString(text, i);
      const raw = text.slice(i, end);
      // Text without escapes came from the UTF-8 decoder: it has no NUL (JSON.parse
      // refuses a raw one) and no unpaired surrogate. Only escapes can add them.
      const decoded = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
      const top = stack[stack.length - 1];
      const isKey = top?.object === true && top.expectKey;
      if (top && isKey) {
        top.expectKey = false;
        top.at = decoded;
        if (top.keys.has(decoded)) {
          issues.push({
            path: path(),
            message: `key ${JSON.stringify(decoded)} appears more than once in one object`,
            code: 'duplicate_key',
          });
        }
        top.keys.add(decoded);
      }
      const problem = unstorableText(decoded);
      if (problem) {
        issues.push({
          path: path(),
          message: `${isKey ? 'key' : 'string'} ${problem}`,
          code: 'unstorable_text',
        });
      }
      i = end;
    } else if (ch === '-' || (ch >= '0' && ch <= '9')) {
      let end = i + 1;
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end += 1;
      const literal = text.slice(i, end);
      const n = Number(literal);
      if (!Number.isFinite(n) || Math.abs(n) > Number.MAX_SAFE_INTEGER) {
        issues.push({
          path: path(),
          message: `${literal.length > 40 ? `${literal.slice(0, 40)}…` : literal} is outside ±(2^53−1): it cannot be read exactly`,
          code: 'unsafe_number',
        });
      }
      i = end;
    } else {
      // Whitespace, ':', and the letters of true / false / null.
      i += 1;
    }
  }
  return issues;
}

/** Index just past the closing quote of the string that opens at `start`. */
function endOfString(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return text.length;
    // Escaped when an odd number of backslashes stands before it.
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes += 1;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** 0-9 . + - e E: the characters of a JSON number after its first. */
function isNumberChar(c: number): boolean {
  return (
    (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2b || c === 0x2d || c === 0x65 || c === 0x45
  );
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/**
 * A size in body-parser's syntax ('16kb', '1mb', '512'), in bytes; undefined when
 * it is not one. Used to refuse a declared Content-Length before reading the body.
 */
export function byteSize(size: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(size);
  if (!m) return undefined;
  return Math.floor(Number(m[1]) * (UNITS[(m[2] ?? 'b').toLowerCase()] as number));
}
