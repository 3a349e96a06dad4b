import type { Page } from 'playwright-core';

/** One row of the Kafka panel's partition table, as its data attributes say it. */
export interface PartitionShown {
  partition: number;
  /** node.id of the leader; null when the row says "none: offline". */
  leader: number | null;
  health: string;
  busiest: boolean;
}

/** The partition table of the Kafka panel, read from the page. */
export async function partitionsShown(page: Page): Promise<PartitionShown[]> {
  return page.locator('[data-testid="kafka-partitions"] tbody tr').evaluateAll((rows) =>
    rows.map((r) => {
      const leader = r.getAttribute('data-leader');
      return {
        partition: Number(r.getAttribute('data-testid')?.replace('kafka-partition-', '')),
        leader: leader === null || leader === 'none' ? null : Number(leader),
        health: r.getAttribute('data-health') ?? '',
        busiest: r.getAttribute('data-busiest') === 'true',
      };
    }),
  );
}

/** The brokers the panel lists as up. */
export async function brokersUp(page: Page): Promise<number[]> {
  return page
    .locator('[data-testid^="kafka-broker-"]')
    .evaluateAll((items) =>
      items
        .filter((b) => b.getAttribute('data-up') === 'true')
        .map((b) => Number(b.getAttribute('data-testid')?.replace('kafka-broker-', ''))),
    );
}

declare global {
  interface Window {
    /** Brokers the Kafka panel showed down (or dropped) since watchBrokersGoingDown. */
    __brokersSeenDown?: number[];
  }
}

/**
 * Records in the page every broker the panel shows down, from now on: a killed broker
 * can be back within seconds, between two polls of the spec.
 */
export async function watchBrokersGoingDown(page: Page, ids: number[]): Promise<void> {
  await page.evaluate((watched) => {
    const seen = new Set<number>();
    window.__brokersSeenDown = [];
    const check = () => {
      for (const id of watched) {
        const el = document.querySelector(`[data-testid="kafka-broker-${id}"]`);
        if ((!el || el.getAttribute('data-up') !== 'true') && !seen.has(id)) {
          seen.add(id);
          window.__brokersSeenDown = [...seen];
        }
      }
    };
    new MutationObserver(check).observe(document.body, {
      subtree: true,
      childList: true,
      attributes: true,
      attributeFilter: ['data-up'],
    });
  }, ids);
}

export const brokersSeenDown = (page: Page): Promise<number[]> =>
  page.evaluate(() => window.__brokersSeenDown ?? []);
