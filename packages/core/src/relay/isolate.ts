import { describeError, isRowError, partitionOf, type RoutedRow } from './publish.ts';
import type { OutboxRow } from './sql.ts';

/**
 * Produce requests the search for refused rows may make in one tick. One culprit among
 * 500 rows on P partitions costs P + 2·⌈log2(500/P)⌉ (≈ 21 with 6); row by row it cost
 * 500, one round-trip each, for minutes on a loaded broker while the claim's transaction
 * held its rows and shard locks. Past the budget the rows not reached yet go back to
 * pending untouched (no attempt counted) and the next tick goes on from there.
 */
export const ISOLATION_MAX_SENDS = 64;

/** What the search did with the rows of a refused batch. */
export interface Isolation {
  /** Acknowledged by Kafka, in id order per aggregate. */
  sent: RoutedRow[];
  /** Refused on their own: the row is at fault. */
  failed: { row: OutboxRow; error: string }[];
  /** Not tried for lack of budget: back to pending, nothing counted. */
  released: RoutedRow[];
  /** Produce requests made (≤ maxSends). */
  sends: number;
}

export interface IsolationOptions {
  /**
   * Produces rows (one send); throws what Kafka said. It replaces the producer itself
   * after a refused send that spanned several partitions (the broker may have written
   * some of them, and kafkajs rolled back all of their sequence numbers): the relay's
   * send does, through sendAcknowledged.
   */
  send: (rows: RoutedRow[]) => Promise<void>;
  /** Aggregates whose earlier row failed: their later rows are not sent this tick. */
  blocked: Set<string>;
  aggregateKey: (row: OutboxRow) => string;
  maxSends?: number;
}

/**
 * Finds the rows at fault in `rows`, a batch Kafka refused with `refusal` (a row error:
 * too large, invalid record…), by splitting it: first by partition (the producer's
 * `relayPartitioner` says where each row went; a partition is written or refused as a
 * whole, so a refused single-partition send wrote nothing and needs no new producer),
 * then in halves. The halves are searched depth first, left to right, so rows are
 * acknowledged in id order, and a row that fails blocks its aggregate before any later
 * row of it is tried: FIFO per aggregate holds as it did row by row. An error that is not the rows' (Kafka down, a
 * missing topic) propagates: the tick fails.
 */
export async function isolateRefusedRows(
  rows: RoutedRow[],
  refusal: unknown,
  options: IsolationOptions,
): Promise<Isolation> {
  const maxSends = options.maxSends ?? ISOLATION_MAX_SENDS;
  const result: Isolation = { sent: [], failed: [], released: [], sends: 0 };

  const attempt = async (list: RoutedRow[], onePartition: boolean): Promise<void> => {
    const live = list.filter((r) => !options.blocked.has(options.aggregateKey(r.row)));
    if (live.length === 0) return;
    // Once one row is released every later one is too: none overtakes a released row.
    if (result.sends >= maxSends || result.released.length > 0) {
      result.released.push(...live);
      return;
    }
    result.sends += 1;
    try {
      await options.send(live);
      result.sent.push(...live);
    } catch (error) {
      if (!isRowError(error)) throw error;
      await refused(live, onePartition, error);
    }
  };

  // `list` was refused as a whole with `error`, a row error.
  const refused = async (list: RoutedRow[], onePartition: boolean, error: unknown) => {
    if (list.length === 1) {
      const [only] = list as [RoutedRow];
      result.failed.push({ row: only.row, error: describeError(error) });
      options.blocked.add(options.aggregateKey(only.row));
      return;
    }
    const groups = onePartition ? [list] : byPartition(list);
    if (groups && groups.length > 1) {
      // An aggregate's rows share a key, hence a partition: any order of groups keeps FIFO.
      for (const group of groups) await attempt(group, true);
      return;
    }
    const single = groups !== undefined;
    const middle = Math.ceil(list.length / 2);
    await attempt(list.slice(0, middle), single);
    await attempt(list.slice(middle), single);
  };

  await refused(rows, false, refusal);
  return result;
}

/** The rows per topic-partition of their last send, in id order; undefined if any is unknown. */
function byPartition(rows: RoutedRow[]): RoutedRow[][] | undefined {
  const groups = new Map<string, RoutedRow[]>();
  for (const r of rows) {
    const partition = partitionOf(r);
    if (partition === undefined) return undefined;
    const key = `${r.topic}\u0000${String(partition)}`;
    const group = groups.get(key);
    if (group) group.push(r);
    else groups.set(key, [r]);
  }
  return [...groups.values()];
}
