import { DEMO_SKUS } from './seed.ts';

/**
 * A traffic generator: POST /orders at `rate` per second (adjustable while running),
 * each order then paid or cancelled now and then, so aggregates get several events.
 */
export class TrafficGenerator {
  private timer: NodeJS.Timeout | undefined;
  private rate = 0;
  sent = 0;
  failed = 0;

  constructor(private readonly orderApiUrl: string) {}

  setRate(perSecond: number): void {
    this.rate = Math.max(0, Math.min(2_000, perSecond));
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.rate === 0) return;
    // Ticks of 100 ms, with the fraction carried so low rates still average right.
    let carry = 0;
    this.timer = setInterval(() => {
      carry += this.rate / 10;
      const n = Math.floor(carry);
      carry -= n;
      for (let i = 0; i < n; i += 1) void this.order();
    }, 100);
  }

  get currentRate(): number {
    return this.rate;
  }

  private async order(): Promise<void> {
    try {
      const res = await fetch(`${this.orderApiUrl}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-source': 'traffic' },
        body: JSON.stringify({
          userId: 1 + Math.floor(Math.random() * 1000),
          sku: DEMO_SKUS[Math.floor(Math.random() * DEMO_SKUS.length)],
          quantity: 1 + Math.floor(Math.random() * 3),
        }),
      });
      this.sent += 1;
      if (!res.ok) {
        this.failed += 1;
        return;
      }
      const { orderId } = (await res.json()) as { orderId: string };
      const roll = Math.random();
      if (roll < 0.5) await fetch(`${this.orderApiUrl}/orders/${orderId}/pay`, { method: 'POST' });
      if (roll < 0.2)
        await fetch(`${this.orderApiUrl}/orders/${orderId}/cancel`, { method: 'POST' });
    } catch {
      this.failed += 1;
    }
  }

  stop(): void {
    this.setRate(0);
  }
}
