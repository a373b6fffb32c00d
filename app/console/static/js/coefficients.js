// What a model learned, by name: a bar chart (uPlot, horizontal bars) of the largest positive and
// most negative weights per class, a table of them per unit of the raw column, and the warnings
// for a degenerate fit. Shared by the model page and the job page's model section.

import uPlot from "../vendor/uplot/uPlot.esm.js";
import { color } from "./charts.js";
import { alertBox, fmtNum, h, options, table } from "./dom.js";

// A fit's warnings ([{code, message}]), one alert each, above everything else on the page (an
// empty box without any).
export function warningsView(warnings) {
  return h("div", { class: "fit-warnings" }, (warnings ?? []).map((w) => alertBox(w.message, {
    kind: "warning", title: w.code === "zero_weights" ? "Every weight is (near) zero:" : "No better than a baseline:" })));
}

// summary: the job's or model's `coefficients` ({top_k, outputs: [{class, intercept, nonzero,
// positive, negative}]}); null for a kernel model, which gets an empty box.
export function coefficientsSection(summary, modelId) {
  if (!summary) return h("div");
  const outputs = summary.outputs;
  const pick = h("select", { "aria-label": "Class" }, options(outputs.map((o, i) => [i, String(o.class)]), 0));
  const figure = h("figure", { class: "chart-box coefficient-chart" },
    h("figcaption", {}, `Up to ${summary.top_k} largest positive and most negative weights, on the scaled features (comparable across features)`));
  const facts = h("p", { class: "subtle coefficient-facts" });
  const rows = h("div");
  let chart = null;
  const draw = () => {
    const out = outputs[Number(pick.value)];
    const entries = [...out.positive, ...out.negative.slice().reverse()];
    facts.textContent = `${fmtNum(out.nonzero)} non-zero weights; intercept ${fmtNum(out.intercept)} (per unit of the raw columns). `
      + `GET /v1/models/${modelId}/coefficients lists them all.`;
    chart?.destroy();
    chart = entries.length ? new BarChart(figure, entries) : null;
    rows.replaceChildren(table([
      { label: "Feature", cell: (e) => e.name },
      { label: "Weight per raw unit", cell: (e) => fmtNum(e.weight), numeric: true },
      { label: "Weight on the scaled feature", cell: (e) => fmtNum(e.model_weight), numeric: true },
    ], entries, { empty: "Every weight is zero." }));
  };
  pick.addEventListener("change", draw);
  const section = h("section", { class: "coefficients", "aria-labelledby": "coefficients-title" },
    h("h2", { id: "coefficients-title" }, "What the model learned"),
    outputs.length > 1 ? h("label", { class: "inline" }, "Class ", pick) : null,
    facts, figure, h("details", {}, h("summary", {}, "The weights by name (table)"), rows));
  draw();
  return section;
}

// Horizontal bars, one per feature named on the left; positive and negative in two colours.
class BarChart {
  constructor(figure, entries) {
    this.box = h("div", { class: "chart" });
    figure.append(this.box);
    const names = entries.map((e) => e.name);
    const index = entries.map((_, i) => i);
    const side = (keep) => entries.map((e) => (keep(e.model_weight) ? e.model_weight : null));
    const height = 40 + 18 * entries.length;
    // The width follows the page (the figure may not be laid out yet when the chart is built).
    const width = () => Math.max(240, figure.clientWidth || 240);
    this.resize = new ResizeObserver(() => this.plot.setSize({ width: width(), height }));
    this.plot = new uPlot({
      width: width(), height,
      scales: { x: { time: false, ori: 1, dir: 1, range: [-0.6, entries.length - 0.4] }, y: { ori: 0, dir: 1 } },
      axes: [
        { scale: "x", side: 3, size: Math.min(220, 12 + 7 * Math.max(...names.map((n) => n.length))),
          splits: () => index, values: (u, splits) => splits.map((i) => names[i] ?? "") },
        { scale: "y", side: 2, label: "weight on the scaled feature", values: (u, splits) => splits.map((v) => fmtNum(v)) },
      ],
      series: [{},
        { label: "positive", fill: color(0), stroke: color(0), paths: uPlot.paths.bars({ size: [0.7, 16] }), points: { show: false } },
        { label: "negative", fill: color(1), stroke: color(1), paths: uPlot.paths.bars({ size: [0.7, 16] }), points: { show: false } }],
      legend: { show: false },
      cursor: { show: false },
    }, [index, side((w) => w > 0), side((w) => w < 0)], this.box);
    this.resize.observe(figure);
  }

  destroy() {
    this.resize.disconnect();
    this.plot.destroy();
    this.box.remove();
  }
}
