import type { BenchContext, ScenarioResult } from '../env/context.ts';
export async function benchApi(_ctx: BenchContext): Promise<ScenarioResult> {
  throw new Error('WIP');
}
