import type { Anomaly, AnomalyKind, ScenarioHit, ScenarioId } from '../contract.ts';

// An order without events is the seed's "network died after commit" only when it was
// written in naive mode: the engine says so per order (`scenario`). In outbox mode
// the same symptom is a stalled consumer or a defect, not that scenario.
const scenarioOf: Partial<Record<AnomalyKind, ScenarioId>> = {
  phantom_event: 'network_after_publish',
};

/**
 * Which of the seed's four scenarios happened last, and the last anomaly of any
 * kind. The happy path is an OrderCreated applied for an order that exists; "network
 * died after commit" is a naive order never published; "died after publish" a phantom
 * event. "DB failed" leaves no trace by definition (nothing happened), so it is never
 * observed.
 */
export class ScenarioTracker {
  latest: ScenarioHit | null = null;
  latestFailure: ScenarioHit | null = null;
  latestAnomaly: Anomaly | null = null;
  counts: Record<ScenarioId, number> = emptyCounts();

  reset(happyBaseline = 0, lost = 0, phantoms = 0): void {
    this.latest = null;
    this.latestFailure = null;
    this.latestAnomaly = null;
    this.counts = {
      happy_path: happyBaseline,
      db_fail: 0,
      network_after_commit: lost,
      network_after_publish: phantoms,
    };
  }

  happy(orderId: string, at: Date): void {
    this.counts.happy_path += 1;
    this.hit({ id: 'happy_path', at: at.toISOString(), orderId });
  }

  anomaly(
    kind: AnomalyKind,
    aggregateId: string | null,
    detail: string,
    {
      at = new Date(),
      scenario = scenarioOf[kind] ?? null,
    }: { at?: Date; scenario?: ScenarioId | null } = {},
  ): void {
    this.latestAnomaly = { kind, scenario, at: at.toISOString(), aggregateId, detail };
    if (scenario) {
      this.counts[scenario] += 1;
      this.hit({ id: scenario, at: at.toISOString(), orderId: aggregateId });
    }
  }

  /** Counts can go down: a late event turns a "lost" order back into a fine one. */
  setCount(id: ScenarioId, value: number): void {
    this.counts[id] = value;
  }

  private hit(hit: ScenarioHit): void {
    if (!this.latest || hit.at >= this.latest.at) this.latest = hit;
    if (hit.id !== 'happy_path') this.latestFailure = hit;
  }
}

function emptyCounts(): Record<ScenarioId, number> {
  return { happy_path: 0, db_fail: 0, network_after_commit: 0, network_after_publish: 0 };
}
