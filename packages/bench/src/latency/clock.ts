/**
 * The clock both ends of the latency measurement read: CLOCK_MONOTONIC of this
 * machine (process.hrtime), the same for every process on it, so a writer's COMMIT
 * time and a consumer's COMMIT time taken in two processes can be subtracted.
 */
export const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;
