/** Display helpers: one place for how numbers, times and ids look. */
const integer = new Intl.NumberFormat('en-US');
const oneDecimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

export const formatCount = (n: number): string => integer.format(n);
export const formatRate = (n: number): string => oneDecimal.format(n);
export const formatSeconds = (s: number): string =>
  s < 10 ? `${oneDecimal.format(s)} s` : `${integer.format(Math.round(s))} s`;

/** A duration in ms: tenths below 10 ms, whole ms below 10 s, then seconds. */
export const formatMs = (ms: number): string =>
  ms < 10
    ? `${oneDecimal.format(ms)} ms`
    : ms < 10_000
      ? `${integer.format(Math.round(ms))} ms`
      : formatSeconds(ms / 1000);

export const formatClock = (iso: string | number): string =>
  new Date(iso).toLocaleTimeString('en-GB', { hour12: false });

/** 1536 → "1.5 KiB": WAL sizes read better in binary units. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/** A UUID or long id cut to what a person can compare at a glance. */
export const shortId = (id: string): string => (id.length > 12 ? `${id.slice(0, 8)}…` : id);

export function formatAgo(iso: string | null, now = Date.now()): string {
  if (!iso) return '—';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  return `${Math.floor(s / 3600)} h ago`;
}
