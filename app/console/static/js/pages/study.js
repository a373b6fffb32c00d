// One study: progress, the paper-style figure (median time to target against training-set size
// m per run and target, the fastest-to-slowest repeat as a band, log axes), its download as SVG
// or PNG, the table, and its jobs.

import { download, get, post } from "../api.js";
import { LineChart, color } from "../charts.js";
import { alertBox, badge, facts, fill, fmtNum, fmtPercent, fmtSeconds, fmtTime, h, link, progressBar, setTitle, table } from "../dom.js";
import { currentScore } from "../jobs_common.js";
import { reporting } from "../banner.js";
import { every, POLL_MS } from "../poll.js";

const DASHES = [undefined, [8, 4], [2, 3], [10, 3, 2, 3]];
const Y_AXES = {
  seconds: { label: "median solver seconds to target", field: "seconds", format: fmtSeconds },
  iterations: { label: "median iterations to target", field: "iterations", format: fmtNum },
};

export async function render(main, { params: [id], signal }) {
  let [study, jobs] = await Promise.all([get(`/v1/studies/${id}`, { signal }), get(`/v1/studies/${id}/jobs?limit=100`, { signal })]);
  setTitle(study.name ?? `Study ${id}`);
  const view = { y: "seconds" };
  // Built once, so that updates leave the keyboard focus where it is.
  const badgeSlot = h("span");
  const cancel = h("button", { type: "button", class: "danger", onclick: reporting("The study was not cancelled:", async () => {
    cancel.disabled = true;
    try {
      await post(`/v1/studies/${id}/cancel`);
    } finally {
      cancel.disabled = false;
    }
    await update();
  }) }, "Cancel study");
  const head = h("div", { class: "page-head" },
    h("h1", { tabindex: "-1" }, `Study #${study.id}${study.name ? `: ${study.name}` : ""} `, badgeSlot), cancel);
  const status = h("div");
  const figureBox = h("figure", { class: "chart-box wide" });
  const caption = h("figcaption");
  figureBox.append(caption);
  const tableBox = h("div");
  const jobsBox = h("div");
  let chart = null;

  const yRadios = Object.entries(Y_AXES).map(([key, axis]) => h("label", { class: "inline" },
    h("input", { type: "radio", name: "study-y", value: key, checked: key === view.y,
      onchange: () => { view.y = key; draw(); } }), ` ${axis.label.replace("median ", "")}`));
  const downloads = ["svg", "png"].map((fmt) => h("button", { type: "button",
    onclick: reporting("The figure could not be downloaded:",
      () => download(`/v1/studies/${id}/plot?format=${fmt}&y=${view.y}`, `study-${id}-${view.y}.${fmt}`)) },
  `Download ${fmt.toUpperCase()}`));

  function draw() {
    const axis = Y_AXES[view.y];
    const rows = study.table ?? [];
    const series = [];
    study.runs.forEach((run, r) => study.targets.forEach((target, t) => {
      const cell = (m) => rows.find((row) => row.run === r && row.target === target && row.m === m);
      const pick = (key) => study.sizes.map((m) => [m, cell(m)?.[key] ?? null]);
      const label = `${run.label ?? run.solver} → ${target}`;
      const base = series.length;
      series.push({ label: `${label} fastest`, color: color(r), edge: true, points: pick(`min_${axis.field}`) });
      series.push({ label: `${label} slowest`, color: color(r), edge: true, points: pick(`max_${axis.field}`) });
      series.push({ label, color: color(r), dash: DASHES[t % DASHES.length], markers: true,
        bandOf: [base, base + 1], points: pick(`median_${axis.field}`) });
    }));
    caption.textContent = `${axis.label[0].toUpperCase()}${axis.label.slice(1)} against training-set size m `
      + `(log-log; band: fastest to slowest repeat that reached it; line style: target).`;
    const spec = { xLabel: "training-set size m", xFormat: fmtNum, yLabel: axis.label, yFormat: axis.format,
      logX: true, logY: true, xSplits: study.sizes, series, height: 360 };
    if (chart) chart.update(spec);
    else chart = new LineChart(figureBox, spec);
  }

  function show() {
    const p = study.progress;
    const active = p.queued + p.running > 0;
    fill(badgeSlot, badge(study.status));
    cancel.hidden = !active || study.cancel_requested;
    fill(status,
      h("div", { class: "job-progress" }, progressBar(p.fraction, `Progress of study ${study.id}`),
        h("span", { class: "subtle" }, `${p.done} of ${p.total} jobs done: ${p.succeeded} succeeded, ${p.failed} failed, `
          + `${p.cancelled} cancelled, ${p.running} running, ${p.queued} queued`)),
      active ? alertBox("The figure and the table fill in as jobs finish.", { kind: "info" }) : null,
      facts([
        ["Data set", study.dataset_id ? link(`#/datasets/${study.dataset_id}`, `#${study.dataset_id}`) : "deleted"],
        ["Evaluation", study.test_dataset_id ? link(`#/datasets/${study.test_dataset_id}`, `data set #${study.test_dataset_id}`)
          : `${fmtPercent(study.test_fraction)} held out`],
        ["Training part", `${fmtNum(study.n_train)} rows`], ["Sizes m", study.sizes.map((m) => fmtNum(m)).join(", ")],
        ["Repeats", study.repeats], ["Targets", `${study.targets.join(", ")} (${study.score_name})`],
        ["Seed", study.seed], study.select_sigma ? ["Sigma grid", study.select_sigma.grid.join(", ")] : null,
        ["Created", fmtTime(study.created_at)], ["Finished", fmtTime(study.finished_at)],
      ]));
    tableBox.replaceChildren(studyTable(study));
    jobsBox.replaceChildren(jobsTable(study, jobs));
  }

  async function update() {
    [study, jobs] = await Promise.all([get(`/v1/studies/${id}`, { signal }), get(`/v1/studies/${id}/jobs?limit=100`, { signal })]);
    show();
    draw();
    return study.progress.queued + study.progress.running > 0;
  }

  main.append(head, status,
    h("section", { "aria-labelledby": "figure-title" }, h("h2", { id: "figure-title" }, "Time to target against m"),
      h("div", { class: "chart-controls" }, h("fieldset", { class: "inline-group" }, h("legend", {}, "y axis"), yRadios),
        h("span", { class: "actions" }, downloads)),
      figureBox),
    h("section", { "aria-labelledby": "table-title" }, h("h2", { id: "table-title" }, "Table"), tableBox),
    h("section", { "aria-labelledby": "jobs-title" }, h("h2", { id: "jobs-title" }, "Jobs"), jobsBox));
  show();
  draw();
  if (study.progress.queued + study.progress.running > 0) every(POLL_MS * 2, update, signal);
}

function studyTable(study) {
  return table([
    { label: "Run", cell: (r) => study.runs[r.run]?.label ?? r.solver },
    { label: "m", cell: (r) => fmtNum(r.m), numeric: true },
    { label: "Target", cell: (r) => String(r.target), numeric: true },
    { label: "Reached", cell: (r) => `${r.reached} of ${r.repeats}`, numeric: true },
    { label: "Median s", cell: (r) => fmtSeconds(r.median_seconds), numeric: true },
    { label: "Fastest s", cell: (r) => fmtSeconds(r.min_seconds), numeric: true },
    { label: "Slowest s", cell: (r) => fmtSeconds(r.max_seconds), numeric: true },
    { label: "Median iterations", cell: (r) => fmtNum(r.median_iterations), numeric: true },
    study.select_sigma ? { label: "Selected sigmas", cell: (r) => (r.selected_sigmas ?? []).map((s) => fmtNum(s)).join(", ") } : null,
  ].filter(Boolean), study.table ?? [], { empty: "No job has finished yet." });
}

function jobsTable(study, jobs) {
  return h("div", {}, table([
    { label: "Job", cell: (j) => link(`#/jobs/${j.id}`, `#${j.id}`) },
    { label: "Status", cell: (j) => badge(j.status) },
    { label: "Run", cell: (j) => study.runs[j.study_run]?.label ?? j.solver },
    { label: "m", cell: (j) => fmtNum(j.train_size), numeric: true },
    { label: "Repeat", cell: (j) => j.study_repeat, numeric: true },
    { label: "Test score", cell: (j) => fmtNum(currentScore(j)), numeric: true },
    { label: "Solver seconds", cell: (j) => fmtSeconds(j.metrics?.solver_seconds), numeric: true },
  ], jobs.items, { empty: "No job." }),
  jobs.next_cursor ? h("p", { class: "subtle" }, `The newest ${jobs.items.length} of ${study.progress.total} jobs.`) : null);
}
