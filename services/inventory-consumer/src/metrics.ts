import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import type { DeadLetterReason } from './message.ts';

/** inventory-consumer's Prometheus metrics, on a registry of its own. */
export class ConsumerMetrics {
  readonly registry = new Registry();
  readonly processed: Counter;
  readonly duplicates: Counter;
  readonly reprocessed: Counter;
  readonly deadLettered: Counter<'reason'>;
  readonly fifoViolations: Counter;
  readonly transientErrors: Counter;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    const counter = <L extends string = never>(name: string, help: string, labelNames: L[] = []) =>
      new Counter<L>({ name, help, labelNames, registers: [this.registry] });
    this.processed = counter(
      'consumer_processed_total',
      'Events applied to the inventory for the first time.',
    );
    this.duplicates = counter(
      'consumer_duplicates_total',
      'Redeliveries caught by the inbox and skipped.',
    );
    this.reprocessed = counter(
      'consumer_reprocessed_total',
      'Redeliveries applied again because the inbox was off (double processing).',
    );
    this.deadLettered = counter(
      'consumer_dead_lettered_total',
      'Messages sent to the dead-letter topic, by reason.',
      ['reason'],
    );
    this.fifoViolations = counter(
      'consumer_fifo_violations_total',
      'Deliveries whose seq was not the next of their aggregate (gap or reorder).',
    );
    this.transientErrors = counter(
      'consumer_transient_errors_total',
      'Deliveries that failed on a transient database error and were left to Kafka to retry.',
    );
  }

  /** Counts one committed delivery under its outcome. */
  count(outcome: 'processed' | 'duplicate' | 'reprocessed', fifoViolation: boolean): void {
    if (outcome === 'processed') this.processed.inc();
    else if (outcome === 'duplicate') this.duplicates.inc();
    else this.reprocessed.inc();
    if (fifoViolation) this.fifoViolations.inc();
  }

  /** Starts the dead-letter series at 0 so dashboards see them before the first one. */
  initReasons(reasons: DeadLetterReason[]): void {
    for (const reason of reasons) this.deadLettered.inc({ reason }, 0);
  }
}
