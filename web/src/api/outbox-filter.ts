import type { OutboxStatus } from '@outbox/dashboard-api/contract';

export interface OutboxFilter {
  status?: OutboxStatus;
  aggregateId?: string;
  cursor?: string;
}

/**
 * Whether the page on screen may stay up while the next one loads. Only when paging
 * through the same filter: the rows of another tab ("All", with a row still failing)
 * shown under "Dead-lettered" would be a lie for as long as the request takes, and a
 * person (or a test) reading the table then reads the wrong status.
 */
export function keepsPageOf(previous: OutboxFilter | undefined, next: OutboxFilter): boolean {
  return (
    previous !== undefined &&
    previous.status === next.status &&
    previous.aggregateId === next.aggregateId
  );
}
