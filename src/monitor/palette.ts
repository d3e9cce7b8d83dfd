/**
 * Line colours for charts of many series: 20 distinct colours readable on white (Tableau's ten,
 * then ten darker or shifted hues), then hues spaced by the golden angle, so no two of a chart's
 * series share a colour.
 */

const COLORS = [
  "#1f77b4",
  "#d62728",
  "#2ca02c",
  "#ff7f0e",
  "#9467bd",
  "#8c564b",
  "#e377c2",
  "#7f7f7f",
  "#bcbd22",
  "#17becf",
  "#393b79",
  "#ad494a",
  "#637939",
  "#8c6d31",
  "#7b4173",
  "#3182bd",
  "#e6550d",
  "#31a354",
  "#756bb1",
  "#636363",
];

/** The colour of a chart's `index`-th series. */
export function seriesColor(index: number): string {
  if (index < COLORS.length) return COLORS[index];
  const hue = Math.round((index * 137.508) % 360);
  return `hsl(${hue} 70% ${index % 2 ? 35 : 45}%)`;
}
