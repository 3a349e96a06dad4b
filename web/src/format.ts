/** Display helpers: one place for how numbers, times and ids look. */
const integer = new Intl.NumberFormat('en-US');
const oneDecimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

export const formatCount = (n: number): string => integer.format(n);
export const formatRate = (n: number): string => oneDecimal.format(n);
export const formatSeconds = (s: number): string =>
  s < 10 ? `${oneDecimal.format(s)} s` : `${integer.format(Math.round(s))} s`;

export const formatClock = (iso: string | number): string =>
  new Date(iso).toLocaleTimeString('en-GB', { hour12: false });

/** A UUID or long id cut to what a person can compare at a glance. */
export const shortId = (id: string): string => (id.length > 12 ? `${id.slice(0, 8)}…` : id);

export function formatAgo(iso: string | null, now = Date.now()): string {
  if (!iso) return '—';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  return `${Math.floor(s / 3600)} h ago`;
}
