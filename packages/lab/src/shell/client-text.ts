import { z } from 'zod';
import { unstorableText } from '@outbox/core';

// C0 controls, DEL and C1 controls (Unicode category Cc). Free text keeps tab, line
// feed and carriage return; one-line text (ids, names, filters) keeps none. Matching
// control characters is the point of these two.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;
// eslint-disable-next-line no-control-regex
const CONTROL_EXCEPT_LINES = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;

export interface ClientTextOptions {
  /** Longest accepted, in UTF-16 code units (zod's `max`). */
  max: number;
  /** Shortest accepted (default 1). */
  min?: number;
  /** Free text: tab, LF and CR allowed (default false). */
  multiline?: boolean;
}

/** What is wrong with `text` as text a client sent, or undefined when nothing is. */
export function clientTextProblem(text: string, multiline = false): string | undefined {
  const unstorable = unstorableText(text);
  if (unstorable) return unstorable;
  const control = (multiline ? CONTROL_EXCEPT_LINES : CONTROL).exec(text);
  if (control) {
    const hex = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    return `contains the control character U+${hex} at index ${control.index}`;
  }
  return undefined;
}

/**
 * A zod string for text a client sends (body fields, query filters, path segments):
 * what PostgreSQL can store (no NUL, no unpaired surrogate) and no control
 * characters, so it can neither fail a statement as a 500 nor reach a log or a
 * terminal as an escape sequence. Emoji, right-to-left text, any script: all fine.
 */
export function clientText(options: ClientTextOptions) {
  return z
    .string()
    .min(options.min ?? 1)
    .max(options.max)
    .superRefine((text, ctx) => {
      const problem = clientTextProblem(text, options.multiline);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });
}
