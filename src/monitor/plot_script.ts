/**
 * The plot page's only script, inline (no network): hovering a chart puts a cursor at the
 * nearest step of the stage under the pointer in every chart that has that stage, and shows the
 * hovered chart's values at that step in a tip. It reads what `svg_chart.ts` writes: each
 * segment's `data-stage`, `data-x` and `data-y`, each path's `data-series` and `data-points`, the
 * legend's labels.
 */

/** The script's source (plain ES2020, no modules). */
export const PLOT_SCRIPT = `(() => {
  const charts = [...document.querySelectorAll("figure.chart")];
  const num = (s) => s.split(" ").map(Number);
  const fmt = (v) => Math.abs(v) >= 1000 ? String(Math.round(v)) : String(Number(v.toPrecision(4)));
  const segmentsOf = (fig) => [...fig.querySelectorAll("g.segment")].map((g) => {
    const [lo, hi, left, right] = num(g.dataset.x);
    const series = [...g.querySelectorAll("path.series")].map((p) => ({
      key: p.dataset.series,
      points: new Map(p.dataset.points.split(";").map((pt) => num(pt))),
    }));
    return { g, stage: g.dataset.stage, lo, hi, left, right, series };
  });
  const model = charts.map((fig) => ({
    fig,
    svg: fig.querySelector("svg"),
    cursor: fig.querySelector("line.cursor"),
    tip: fig.querySelector(".tip"),
    labels: new Map([...fig.querySelectorAll(".legend span")].map((s) => [s.dataset.series, s.textContent])),
    segments: segmentsOf(fig),
  }));
  const xOf = (seg, step) => seg.left + (step - seg.lo) / (seg.hi - seg.lo) * (seg.right - seg.left);
  const hide = () => model.forEach((c) => { c.cursor.setAttribute("x1", -10); c.cursor.setAttribute("x2", -10); c.tip.style.display = "none"; });
  const show = (chart, event) => {
    const point = chart.svg.createSVGPoint();
    point.x = event.clientX; point.y = event.clientY;
    const x = point.matrixTransform(chart.svg.getScreenCTM().inverse()).x;
    const seg = chart.segments.find((s) => x >= s.left - 4 && x <= s.right + 4);
    if (!seg) return hide();
    const want = seg.lo + (x - seg.left) / (seg.right - seg.left) * (seg.hi - seg.lo);
    const steps = [...new Set(seg.series.flatMap((s) => [...s.points.keys()]))];
    if (steps.length === 0) return hide();
    const step = steps.reduce((a, b) => Math.abs(b - want) < Math.abs(a - want) ? b : a);
    for (const c of model) {
      const same = c.segments.find((s) => s.stage === seg.stage);
      const at = same && step >= same.lo - 0.5 && step <= same.hi + 0.5 ? xOf(same, step) : -10;
      c.cursor.setAttribute("x1", at); c.cursor.setAttribute("x2", at);
    }
    const rows = seg.series.filter((s) => s.points.has(step))
      .map((s) => chart.labels.get(s.key) + ": " + fmt(s.points.get(step)));
    chart.tip.textContent = (seg.stage ? "stage " + seg.stage + ", " : "") + "step " + step + (rows.length ? "\\n" + rows.join("\\n") : "");
    chart.tip.style.display = "block";
    const box = chart.fig.getBoundingClientRect();
    chart.tip.style.left = Math.min(event.clientX - box.left + 12, box.width - 220) + "px";
    chart.tip.style.top = (event.clientY - box.top + 12) + "px";
  };
  for (const chart of model) {
    chart.svg.addEventListener("mousemove", (e) => show(chart, e));
    chart.svg.addEventListener("mouseleave", hide);
  }
})();`;
