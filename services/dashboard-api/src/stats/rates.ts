/** Counters whose growth per second the dashboard shows. */
export interface RateSample {
  at: number;
  published: number;
  deliveries: number;
  orders: number;
}

/**
 * Per-second rates from the counters' growth over a sliding window (about 2 s): a
 * per-tick delta at 400 ms would jump with every batch the relay happens to finish.
 */
export class Rates {
  private samples: RateSample[] = [];

  constructor(private readonly windowMs = 2_000) {}

  clear(): void {
    this.samples = [];
  }

  add(sample: RateSample): {
    publishPerSecond: number;
    consumePerSecond: number;
    ordersPerSecond: number;
  } {
    this.samples.push(sample);
    while (
      this.samples.length > 2 &&
      sample.at - (this.samples[1]?.at ?? sample.at) >= this.windowMs
    ) {
      this.samples.shift();
    }
    const first = this.samples[0] ?? sample;
    const seconds = (sample.at - first.at) / 1000;
    const rate = (key: keyof Omit<RateSample, 'at'>) =>
      seconds > 0 ? Math.max(0, (sample[key] - first[key]) / seconds) : 0;
    return {
      publishPerSecond: rate('published'),
      consumePerSecond: rate('deliveries'),
      ordersPerSecond: rate('orders'),
    };
  }
}
