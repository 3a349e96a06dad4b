/**
 * Parses an operator's duration: `90s`, `30m`, `12h`, `7d`, or a sum like `1d12h`.
 * Returns seconds; throws naming the input, so a typo in a retention never deletes more.
 */
export function parseDuration(text: string): number {
  const units: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800 };
  const trimmed = text.trim();
  if (!/^(\d+(\.\d+)?[smhdw])+$/.test(trimmed)) {
    throw new Error(`"${text}" is not a duration (e.g. 90s, 30m, 12h, 7d, 1d12h)`);
  }
  let seconds = 0;
  for (const [, amount, unit] of trimmed.matchAll(/(\d+(?:\.\d+)?)([smhdw])/g)) {
    seconds += Number(amount) * (units[unit!] ?? 0);
  }
  return seconds;
}
