/** One UTC day of the outbox: partition `outbox_pYYYYMMDD` holds [from, to). */
export interface Day {
  name: string;
  from: Date;
  to: Date;
}

const DAY_MS = 86_400_000;

/** The UTC day containing `t`. */
export function dayOf(t: Date): Day {
  const from = new Date(Math.floor(t.getTime() / DAY_MS) * DAY_MS);
  const to = new Date(from.getTime() + DAY_MS);
  const name = `outbox_p${from.toISOString().slice(0, 10).replaceAll('-', '')}`;
  return { name, from, to };
}

/** Every UTC day from the one containing `first` to the one containing `last`. */
export function daysBetween(first: Date, last: Date): Day[] {
  const days: Day[] = [];
  for (let d = dayOf(first); d.from.getTime() <= last.getTime(); d = dayOf(d.to)) days.push(d);
  return days;
}

/** The day a partition name stands for, or undefined for another table (e.g. the default). */
export function dayOfName(name: string): Day | undefined {
  const m = /^outbox_p(\d{4})(\d{2})(\d{2})$/.exec(name);
  if (!m) return undefined;
  return dayOf(new Date(`${m[1]}-${m[2]}-${m[3]}T00:00:00Z`));
}
