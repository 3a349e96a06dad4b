import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { ScenarioResult } from '../env/context.ts';

/**
 * One SVG a person can look at: per scenario, a bar per variant with its ratio to the
 * scenario's reference (1 = the reference), and a tick at the target where there is
 * one. Rendered by Vega headless (SVG needs no canvas).
 */
export async function renderChart(results: ScenarioResult[]): Promise<string> {
  const charts: object[] = results
    .filter((r) => r.chart && r.chart.length > 0)
    .map((r) => {
      const values = r.chart!.map((c) => ({
        label: c.label,
        value: Number.isFinite(c.value) ? c.value : 0,
        shown: formatRatio(c.value),
        target: c.target ?? null,
      }));
      return {
        title: { text: r.chartTitle ?? r.title, anchor: 'start' as const, fontSize: 13 },
        data: { values },
        width: 520,
        height: { step: 20 },
        layer: [
          {
            mark: { type: 'bar' as const, color: '#4c78a8' },
            encoding: {
              y: {
                field: 'label',
                type: 'nominal' as const,
                sort: null,
                title: null,
                axis: { labelLimit: 330 },
              },
              x: {
                field: 'value',
                type: 'quantitative' as const,
                title: 'ratio',
                scale: { type: 'sqrt' as const },
              },
            },
          },
          {
            mark: { type: 'text' as const, align: 'left' as const, dx: 4, fontSize: 11 },
            encoding: {
              y: { field: 'label', type: 'nominal' as const, sort: null },
              x: { field: 'value', type: 'quantitative' as const },
              text: { field: 'shown', type: 'nominal' as const },
            },
          },
          {
            mark: { type: 'tick' as const, color: '#e45756', thickness: 3, size: 18 },
            transform: [{ filter: 'datum.target != null' }],
            encoding: {
              y: { field: 'label', type: 'nominal' as const, sort: null },
              x: { field: 'target', type: 'quantitative' as const },
            },
          },
        ],
      };
    });
  if (charts.length === 0) charts.push(emptyChart());
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'Outbox Lab benchmarks — ratios (red tick: target)', fontSize: 15 },
    vconcat: charts,
    config: { view: { stroke: null }, background: 'white' },
  } as TopLevelSpec;
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

function formatRatio(v: number): string {
  if (!Number.isFinite(v)) return '–';
  return v >= 2 ? `${v.toFixed(1)}×` : `${(v * 100).toFixed(0)}%`;
}

function emptyChart() {
  return {
    title: 'no scenario with ratios ran',
    data: { values: [{ label: '–', value: 0, shown: '', target: null }] },
    mark: 'bar' as const,
    encoding: {
      y: { field: 'label', type: 'nominal' as const },
      x: { field: 'value', type: 'quantitative' as const },
    },
  };
}
