/**
 * A line chart of a run's metric over its stages, as inline SVG in an HTML `<figure>`: one
 * segment per stage side by side (its own step axis and value axis: an SFT loss of 3 and a GRPO
 * loss of 0.005 each get their own scale), a dashed boundary with the stage's name where a
 * segment begins, one `<path>` per series and segment (gaps where a value is null; a lone point
 * is a dot; a series with few points, such as an evaluation, has a dot on every point), a shaded
 * band for a spread (mean ± std), and a legend. Charts over the same stages get the same segment
 * geometry, so their steps line up. Each segment carries its scales (`data-x`: first and last
 * step, left and right pixel; `data-y`: low and high value, bottom and top pixel) and each path
 * its points (`data-points`: `step value;...`), which the page's hover script and tests read.
 */

import { formatMetric } from "./console_progress.ts";

/** Points of a series in one stage, by step; `null` breaks the line. */
export type StagePoints = readonly ([number, number] | null)[];

/** One line: its key, legend label, colour and points per stage (indexes of the chart's stages). */
export interface ChartSeries {
  key: string;
  label: string;
  color: string;
  points: readonly StagePoints[];
  /** A spread drawn as a band around the line: [step, low, high] per stage. */
  band?: readonly (readonly [number, number, number][])[];
}

/** A stage of the chart: its name and step range. */
export interface ChartStage {
  name: string;
  first: number;
  last: number;
}

const WIDTH = 960;
const HEIGHT = 230;
const TOP = 22; // room for stage names
const BOTTOM = 30;
const AXIS = 56; // room for each segment's value ticks
const RIGHT = 12;

/** Escapes `&`, `<`, `>` and `"` for HTML text and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"]/g,
    (c) => `&${{ "&": "amp", "<": "lt", ">": "gt", '"': "quot" }[c]};`,
  );
}

/** An axis range widened to round tick values, and those ticks (about `intervals` + 1). */
export function niceScale(
  min: number,
  max: number,
  integer = false,
  intervals = 4,
): { lo: number; hi: number; ticks: number[] } {
  if (min === max) {
    const pad = integer ? 0.5 : min === 0 ? 1 : Math.abs(min) * 0.1;
    [min, max] = [min - pad, max + pad];
  }
  const raw = (max - min) / intervals;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw)!;
  if (integer) step = Math.max(1, step);
  const first = Math.floor(min / step);
  const last = Math.ceil(max / step);
  // toPrecision drops float noise such as 0.6000000000000001.
  const ticks = Array.from(
    { length: last - first + 1 },
    (_, i) => Number(((first + i) * step).toPrecision(12)),
  );
  const round = (v: number) => Number(v.toPrecision(12));
  return { lo: round(first * step), hi: round(last * step), ticks };
}

/**
 * The left and right pixels of each stage's segment: widths in proportion to the stages' step
 * counts, but none under half its equal share, so a short stage after a long one stays readable.
 */
export function segmentBounds(stages: readonly ChartStage[], width = WIDTH): [number, number][] {
  const usable = width - RIGHT;
  const span = stages.map((s) => Math.max(1, s.last - s.first + 1));
  const floor = 1 / (2 * stages.length);
  let shares = span.map((n) => n / span.reduce((a, b) => a + b, 0));
  const small = shares.map((s) => s < floor);
  const rest = shares.reduce((sum, s, i) => sum + (small[i] ? 0 : s), 0);
  const left = 1 - floor * small.filter((x) => x).length;
  shares = shares.map((s, i) => (small[i] ? floor : (s / rest) * left));
  let x = 0;
  return shares.map((share) => {
    const bounds: [number, number] = [x + AXIS, x + share * usable];
    x += share * usable;
    return bounds;
  });
}

/** A `<figure>` titled `title` with the chart of `series` over `stages` (see the file comment). */
export function renderChart(
  title: string,
  stages: readonly ChartStage[],
  series: readonly ChartSeries[],
): string {
  const bounds = segmentBounds(stages);
  const segments = stages.map((stage, i) => renderSegment(stage, i, bounds[i], series));
  const svg = [
    `<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" preserveAspectRatio="none" role="img">`,
    ...segments,
    `<line class="cursor" y1="${TOP}" y2="${HEIGHT - BOTTOM}" x1="-10" x2="-10"/>`,
    `</svg>`,
  ].join("\n");
  const legend = `<div class="legend">${
    series.map((s) =>
      `<span data-series="${escapeHtml(s.key)}"><i style="background:${s.color}"></i>${
        escapeHtml(s.label)
      }${s.band ? " (band: ± std, within min and max)" : ""}</span>`
    ).join(" ")
  }</div>`;
  return `<figure class="chart" data-title="${escapeHtml(title)}"><figcaption>${
    escapeHtml(title)
  }</figcaption>\n${svg}\n${legend}<div class="tip"></div></figure>`;
}

/** One stage's segment: boundary and name, axes, bands, then lines. */
function renderSegment(
  stage: ChartStage,
  index: number,
  [left, right]: [number, number],
  series: readonly ChartSeries[],
): string {
  const values = series.flatMap((s) => [
    ...s.points[index].flatMap((p) => (p === null ? [] : [p[1]])),
    ...(s.band?.[index] ?? []).flatMap(([, lo, hi]) => [lo, hi]),
  ]);
  const y = niceScale(Math.min(...values), Math.max(...values));
  const x = stage.first === stage.last
    ? { lo: stage.first - 0.5, hi: stage.last + 0.5 }
    : { lo: stage.first, hi: stage.last };
  const bottom = HEIGHT - BOTTOM;
  const px = (v: number) => (left + ((v - x.lo) / (x.hi - x.lo)) * (right - left)).toFixed(1);
  const py = (v: number) => (TOP + (1 - (v - y.lo) / (y.hi - y.lo)) * (bottom - TOP)).toFixed(1);
  const intervals = Math.max(2, Math.floor((right - left) / 90));
  const xTicks = niceScale(stage.first, stage.last, true, intervals).ticks
    .filter((t) => t >= x.lo && t <= x.hi);
  const boundary = index > 0
    ? `<line class="stage-boundary" data-stage="${escapeHtml(stage.name)}" x1="${
      left - AXIS + 2
    }" x2="${left - AXIS + 2}" y1="4" y2="${bottom}"/>`
    : "";
  const name = stage.name
    ? `<text class="stage-label" x="${left}" y="14">${escapeHtml(stage.name)}</text>`
    : "";
  return [
    `<g class="segment" data-stage="${escapeHtml(stage.name)}" data-x="${x.lo} ${x.hi} ${left} ${
      right.toFixed(1)
    }" data-y="${y.lo} ${y.hi} ${bottom} ${TOP}">`,
    boundary,
    name,
    ...y.ticks.map((t) =>
      `<line class="grid" x1="${left}" x2="${right.toFixed(1)}" y1="${py(t)}" y2="${py(t)}"/>` +
      `<text class="tick" x="${left - 4}" y="${py(t)}" text-anchor="end" ` +
      `dominant-baseline="middle">${formatMetric(t)}</text>`
    ),
    ...xTicks.map((t) =>
      `<text class="tick" x="${px(t)}" y="${bottom + 16}" text-anchor="middle">${
        formatMetric(t)
      }</text>`
    ),
    `<path class="axis" d="M${left},${TOP}V${bottom}H${right.toFixed(1)}"/>`,
    ...series.flatMap((s) => s.band?.[index].length ? [bandSvg(s, s.band[index], px, py)] : []),
    ...series.flatMap((s) => seriesSvg(s, s.points[index], px, py)),
    `</g>`,
  ].join("\n");
}

/** The band of a spread: the polygon of the highs forward and the lows back. */
function bandSvg(
  series: ChartSeries,
  band: readonly (readonly [number, number, number])[],
  px: (v: number) => string,
  py: (v: number) => string,
): string {
  const upper = band.map(([step, , hi]) => `${px(step)},${py(hi)}`);
  const lower = [...band].reverse().map(([step, lo]) => `${px(step)},${py(lo)}`);
  return `<path class="band" data-series="${escapeHtml(series.key)}" fill="${series.color}" d="M${
    [...upper, ...lower].join("L")
  }Z"/>`;
}

/** Few enough points to mark each one (an evaluation every N steps). */
const MARK_ALL_BELOW = 30;

/** The `<path>` of a series in one segment, plus its dots (see the file comment). */
function seriesSvg(
  series: ChartSeries,
  points: StagePoints,
  px: (v: number) => string,
  py: (v: number) => string,
): string[] {
  const present = points.filter((p) => p !== null);
  if (present.length === 0) return [];
  let d = "";
  const dots: string[] = [];
  const markAll = present.length < MARK_ALL_BELOW;
  points.forEach((p, i) => {
    if (p === null) return;
    const joinsPrevious = i > 0 && points[i - 1] !== null;
    d += `${joinsPrevious ? "L" : "M"}${px(p[0])},${py(p[1])}`;
    const alone = !joinsPrevious && (i + 1 >= points.length || points[i + 1] === null);
    if (markAll || alone) {
      dots.push(`<circle cx="${px(p[0])}" cy="${py(p[1])}" r="2.5" fill="${series.color}"/>`);
    }
  });
  const data = present.map(([step, value]) => `${step} ${value}`).join(";");
  return [
    `<path class="series" data-series="${
      escapeHtml(series.key)
    }" data-points="${data}" stroke="${series.color}" d="${d}"/>`,
    ...dots,
  ];
}
