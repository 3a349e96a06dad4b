import type { BenchContext, ScenarioResult } from '../env/context.ts';
export async function benchGrowth(_ctx: BenchContext): Promise<ScenarioResult> {
  throw new Error('WIP');
}
