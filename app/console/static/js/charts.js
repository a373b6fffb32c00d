// Line charts on uPlot (vendored, see vendor/uplot/VERSION): log axes, dashed target lines,
// values on hover (uPlot's live legend), min-max bands, and a width that follows the page.

import uPlot from "../vendor/uplot/uPlot.esm.js";
import { fmtNum, fmtSeconds, h } from "./dom.js";

// Tableau 10: distinct, and readable on white.
const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
  "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"];

export const color = (i) => PALETTE[i % PALETTE.length];

export const X_AXES = {
  seconds: { label: "solver seconds", field: "solver_seconds", format: fmtSeconds },
  samples: { label: "samples seen", field: "samples_seen", format: fmtNum },
};

// Dashed horizontal lines at the targets, labelled at the right end.
function targetLines(targets) {
  return {
    hooks: {
      draw: [(u) => {
        const { ctx, bbox } = u;
        ctx.save();
        ctx.strokeStyle = "#555";
        ctx.fillStyle = "#333";
        ctx.lineWidth = devicePixelRatio;
        ctx.setLineDash([5 * devicePixelRatio, 4 * devicePixelRatio]);
        ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
        ctx.textAlign = "right";
        for (const t of targets) {
          const y = u.valToPos(t, "y", true);
          if (y < bbox.top || y > bbox.top + bbox.height) continue;
          ctx.beginPath();
          ctx.moveTo(bbox.left, y);
          ctx.lineTo(bbox.left + bbox.width, y);
          ctx.stroke();
          ctx.fillText(`target ${t}`, bbox.left + bbox.width - 4, y - 4 * devicePixelRatio);
        }
        ctx.restore();
      }],
    },
  };
}

// Keep the y range wide enough to show every target line.
function rangeWithTargets(targets) {
  return (u, min, max) => {
    let lo = Math.min(min ?? Infinity, ...targets);
    let hi = Math.max(max ?? -Infinity, ...targets);
    if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [0, 1];
    const pad = (hi - lo) * 0.05 || Math.abs(hi) * 0.05 || 0.05;
    return [lo - pad, hi + pad];
  };
}

// spec: {xLabel, yLabel, xFormat, yFormat, logX, logY, xSplits, targets, sync, height,
//        series: [{label, color, points: [[x, y], ...], dash, markers, edge, bandOf}]}
// A series with bandOf: [lowIdx, highIdx] (indices into spec.series) gets a filled band between
// those two series, which are marked edge: true (no line of their own, no legend entry).
export class LineChart {
  constructor(container, spec) {
    this.container = container;
    this.figure = h("div", { class: "chart" });
    container.append(this.figure);
    this.resize = new ResizeObserver(() => this.plot?.setSize(this.size()));
    this.resize.observe(container);
    this.update(spec);
  }

  size() {
    const width = Math.max(240, this.container.clientWidth);
    return { width, height: this.spec.height ?? (width < 560 ? 220 : 300) };
  }

  update(spec) {
    const shape = JSON.stringify([spec.xLabel, spec.yLabel, spec.logX, spec.logY, spec.targets,
      spec.series.map((s) => [s.label, s.color, s.edge, s.bandOf])]);
    const data = align(spec);
    this.spec = spec;
    if (this.plot && shape === this.shape) {
      this.plot.setData(data);
      return;
    }
    this.shape = shape;
    this.plot?.destroy();
    this.plot = new uPlot(this.options(spec), data, this.figure);
  }

  options(spec) {
    const targets = spec.targets ?? [];
    const series = spec.series.map((s) => (s.edge
      ? { label: s.label, stroke: s.color, width: 0, points: { show: false }, class: "band-edge" }
      : { label: s.label, stroke: s.color, width: 2, dash: s.dash, spanGaps: true,
        // Markers where points are few (uPlot's default) unless the caller says.
        points: s.markers === undefined ? { size: 6, fill: s.color } : { show: s.markers, size: 6, fill: s.color },
        value: (u, v) => (v === null || v === undefined ? "—" : (spec.yFormat ?? fmtNum)(v)) }));
    const bands = [];
    spec.series.forEach((s) => {
      if (s.bandOf) bands.push({ series: [s.bandOf[1] + 1, s.bandOf[0] + 1], fill: `${s.color}26` });
    });
    const xFormat = spec.xFormat ?? fmtNum;
    return {
      ...this.size(),
      series: [{ label: spec.xLabel, value: (u, v) => (v === null || v === undefined ? "—" : xFormat(v)) },
        ...series],
      bands,
      scales: {
        x: { time: false, distr: spec.logX ? 3 : 1, log: 10, ...(spec.xSplits ? { range: paddedRange(spec.xSplits) } : {}) },
        y: { distr: spec.logY ? 3 : 1, log: 10, ...(targets.length && !spec.logY ? { range: rangeWithTargets(targets) } : {}) },
      },
      axes: [
        { label: spec.xLabel, values: (u, splits) => splits.map((v) => (v === null ? "" : xFormat(v))),
          // Ticks exactly at the given values (a study's sizes m) instead of round numbers.
          ...(spec.xSplits ? { splits: () => spec.xSplits, filter: (u, splits) => splits } : {}) },
        { label: spec.yLabel, size: 64, values: (u, splits) => splits.map((v) => (v === null ? "" : (spec.yFormat ?? fmtNum)(v))) },
      ],
      cursor: { sync: spec.sync ? { key: spec.sync } : undefined, drag: { x: true, y: false } },
      legend: { live: true },
      plugins: targets.length ? [targetLines(targets)] : [],
    };
  }

  canvas() {
    return this.figure.querySelector("canvas");
  }

  destroy() {
    this.resize.disconnect();
    this.plot?.destroy();
  }
}

// A log-scale range a little wider than the values, so the end points are not on the frame.
function paddedRange(values) {
  return () => [Math.min(...values) / 1.25, Math.max(...values) * 1.25];
}

// uPlot wants one x array and one y array per series; series sampled at different x are joined
// (nulls where a series has no point). A log axis cannot show x <= 0 (the first checkpoint is at
// 0 seconds), so those points are left out there.
function align(spec) {
  const keep = ([x, y]) => x !== null && y !== null && y !== undefined
    && (!spec.logX || x > 0) && (!spec.logY || y > 0);
  const tables = spec.series.map((s) => {
    const pts = s.points.filter(keep).sort((a, b) => a[0] - b[0]);
    return [pts.map((p) => p[0]), pts.map((p) => p[1])];
  });
  if (!tables.length) return [[]];
  if (tables.length === 1) return tables[0];
  return uPlot.join(tables);
}

// The x axis (solver seconds or samples seen) and log-x choices above a chart; `view` is
// {x, logX}, changed in place before `onChange` runs.
export function chartControls(view, onChange) {
  const radios = Object.entries(X_AXES).map(([key, axis]) => h("label", { class: "inline" },
    h("input", { type: "radio", name: "x-axis", value: key, checked: view.x === key,
      onchange: () => { view.x = key; onChange(); } }), ` ${axis.label}`));
  const log = h("label", { class: "inline" }, h("input", { type: "checkbox", checked: view.logX,
    onchange: (e) => { view.logX = e.target.checked; onChange(); } }), " log x axis");
  return h("div", { class: "chart-controls" },
    h("fieldset", { class: "inline-group" }, h("legend", {}, "x axis"), radios), log,
    h("span", { class: "hint" }, "Hover for values; drag to zoom, double-click to reset."));
}
