// With the `u` flag a surrogate pair is one code point, so this matches only a
// surrogate without its partner: JavaScript strings may hold one, Unicode text may not.
const UNPAIRED_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Why PostgreSQL cannot store `text` as it is, or undefined when it can. NUL is
 * refused by text (22021) and by jsonb (22P05); an unpaired surrogate is refused by
 * jsonb (as the `\ud800` escape JSON.stringify writes for it, 22P02) and silently
 * becomes U+FFFD in text. Both would surface as a 500, or as data that changed.
 */
export function unstorableText(text: string): string | undefined {
  const nul = text.indexOf('\u0000');
  if (nul !== -1) return `contains NUL (U+0000) at index ${nul}, which PostgreSQL cannot store`;
  const lone = UNPAIRED_SURROGATE.exec(text);
  if (lone) {
    const hex = lone[0].charCodeAt(0).toString(16).toUpperCase();
    return `contains an unpaired surrogate (U+${hex}) at index ${lone.index}, which is not Unicode text`;
  }
  return undefined;
}
