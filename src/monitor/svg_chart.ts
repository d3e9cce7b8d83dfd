/**
 * A small static line chart as inline SVG inside an HTML `<figure>`: axes with a few "nice" tick
 * labels, one `<path>` per series (gaps where a point is null), a legend when there are several.
 * No interactivity, no log scales, no JavaScript.
 */

import { formatMetric } from "./console_progress.ts";

/** One line: its legend label and its points in x order; `null` breaks the line. */
export interface Series {
  label: string;
  points: readonly ([number, number] | null)[];
}

const WIDTH = 420;
const HEIGHT = 220;
const MARGIN = { left: 56, right: 12, top: 10, bottom: 30 };
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"];

/** Escapes `&`, `<`, `>` and `"` for HTML text and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"]/g,
    (c) => `&${{ "&": "amp", "<": "lt", ">": "gt", '"': "quot" }[c]};`,
  );
}

/** An axis range widened to round tick values, and those ticks (about five). */
export function niceScale(
  min: number,
  max: number,
  integer = false,
): { lo: number; hi: number; ticks: number[] } {
  if (min === max) {
    const pad = integer ? 0.5 : min === 0 ? 1 : Math.abs(min) * 0.1;
    [min, max] = [min - pad, max + pad];
  }
  const raw = (max - min) / 4;
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
  return { lo: first * step, hi: last * step, ticks };
}

/** A `<figure>` with `title`, the chart of `series` (x = step, integer ticks) and a legend. */
export function renderLineChart(title: string, series: readonly Series[]): string {
  const points = series.flatMap((s) => s.points.filter((p) => p !== null));
  const x = niceScale(
    Math.min(...points.map((p) => p[0])),
    Math.max(...points.map((p) => p[0])),
    true,
  );
  const y = niceScale(Math.min(...points.map((p) => p[1])), Math.max(...points.map((p) => p[1])));
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const px = (v: number) => (MARGIN.left + ((v - x.lo) / (x.hi - x.lo)) * plotW).toFixed(1);
  const py = (v: number) => (MARGIN.top + (1 - (v - y.lo) / (y.hi - y.lo)) * plotH).toFixed(1);
  const bottom = MARGIN.top + plotH;
  const svg = [
    `<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img">`,
    ...y.ticks.map((t) =>
      `<line class="grid" x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${py(t)}" y2="${
        py(t)
      }"/><text class="tick" x="${MARGIN.left - 4}" y="${py(t)}" text-anchor="end" ` +
      `dominant-baseline="middle">${formatMetric(t)}</text>`
    ),
    ...x.ticks.map((t) =>
      `<text class="tick" x="${px(t)}" y="${bottom + 16}" text-anchor="middle">${
        formatMetric(t)
      }</text>`
    ),
    `<path class="axis" d="M${MARGIN.left},${MARGIN.top}V${bottom}H${WIDTH - MARGIN.right}"/>`,
    `<text class="tick" x="${WIDTH - MARGIN.right}" y="${
      HEIGHT - 2
    }" text-anchor="end">step</text>`,
    ...series.flatMap((s, i) => seriesSvg(s, COLORS[i % COLORS.length], px, py)),
    `</svg>`,
  ];
  const legend = series.length > 1
    ? `<div class="legend">${
      series.map((s, i) =>
        `<span><i style="background:${COLORS[i % COLORS.length]}"></i>${escapeHtml(s.label)}</span>`
      ).join(" ")
    }</div>`
    : "";
  return `<figure class="chart"><figcaption>${escapeHtml(title)}</figcaption>\n${
    svg.join("\n")
  }\n${legend}</figure>`;
}

/** One `<path>` for the series, plus a dot for each point with no neighbour to join. */
function seriesSvg(
  series: Series,
  color: string,
  px: (v: number) => string,
  py: (v: number) => string,
): string[] {
  let d = "";
  const dots: string[] = [];
  series.points.forEach((p, i) => {
    if (p === null) return;
    const joinsPrevious = i > 0 && series.points[i - 1] !== null;
    d += `${joinsPrevious ? "L" : "M"}${px(p[0])},${py(p[1])}`;
    if (!joinsPrevious && (i + 1 >= series.points.length || series.points[i + 1] === null)) {
      dots.push(`<circle cx="${px(p[0])}" cy="${py(p[1])}" r="2" fill="${color}"/>`);
    }
  });
  const label = escapeHtml(series.label);
  return [`<path class="series" data-series="${label}" stroke="${color}" d="${d}"/>`, ...dots];
}
