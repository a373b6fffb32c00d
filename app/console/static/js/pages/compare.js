// Compare: jobs of one data set side by side, their curves overlaid and a table of the solver
// seconds each took to reach each target: which solver, p or sigma gets there first.

import { get, listAll } from "../api.js";
import { LineChart, X_AXES, chartControls, color } from "../charts.js";
import { badge, fmtNum, fmtParams, fmtSeconds, h, labelled, link, options, setTitle } from "../dom.js";
import { numberList } from "../forms.js";
import { currentScore, currentSeconds, isActive, traceOf } from "../jobs_common.js";
import { LiveTable } from "../live_table.js";
import { every, POLL_MS } from "../poll.js";

export async function render(main, { query, signal }) {
  setTitle("Compare jobs");
  const [jobs, datasets] = await Promise.all([listAll("/v1/jobs", { max: 2000, signal }), listAll("/v1/datasets", { signal })]);
  const selected = new Set((query.get("ids") ?? "").split(",").filter(Boolean).map(Number));
  const first = jobs.find((j) => selected.has(j.id));
  let datasetId = Number(query.get("dataset") ?? first?.dataset_id ?? jobs.find((j) => j.dataset_id)?.dataset_id ?? 0);
  const view = { x: "seconds", logX: true };
  const traces = new Map();
  let current = new Map(jobs.map((j) => [j.id, j]));

  main.append(h("h1", { tabindex: "-1" }, "Compare jobs"));
  const withJobs = datasets.filter((d) => jobs.some((j) => j.dataset_id === d.id));
  if (!withJobs.length) {
    main.append(h("p", { class: "empty" }, "No job yet. ", link("#/jobs/new", "Start one"), "."));
    return;
  }
  if (!withJobs.some((d) => d.id === datasetId)) datasetId = withJobs[0].id;

  const datasetSelect = h("select", {},
    options(withJobs.map((d) => [d.id, `${d.name} (#${d.id})`]), datasetId));
  const picker = new LiveTable([
    { label: "Compare", cell: (j) => h("input", { type: "checkbox", "aria-label": `Compare job ${j.id}`, checked: selected.has(j.id),
      onchange: (e) => { if (e.target.checked) selected.add(j.id); else selected.delete(j.id); changed(); } }) },
    { label: "Job", cell: (j) => link(`#/jobs/${j.id}`, `#${j.id}`) },
    { label: "Status", live: true, cell: (j) => badge(j.status) },
    { label: "Solver", cell: (j) => j.solver },
    { label: "Parameters", cell: (j) => fmtParams(j.params, 6) },
    { label: "Test score", live: true, numeric: true, cell: (j) => fmtNum(currentScore(j, traces.get(j.id))) },
  ], { empty: "No job on this data set." });
  const targetsInput = h("input", { type: "text", inputmode: "decimal", autocomplete: "off" });
  const scoreBox = h("figure", { class: "chart-box" }, h("figcaption", {}, "Test score (dashed: targets)"));
  const objectiveBox = h("figure", { class: "chart-box" }, h("figcaption", {}, "Training objective"));
  const tableBox = h("div");
  const note = h("p", { class: "subtle" });
  let scoreChart = null;
  let objectiveChart = null;

  const pickable = () => [...current.values()].filter((j) => j.dataset_id === datasetId).sort((a, b) => b.id - a.id);
  // Oldest first: the first job picked keeps the first colour.
  const chosen = () => pickable().filter((j) => selected.has(j.id)).reverse();

  async function loadTraces() {
    const need = chosen().filter((j) => !traces.has(j.id) || isActive(j) || !traces.get(j.id).final);
    const fetched = await Promise.all(need.map((j) => traceOf(j.id, signal)));
    need.forEach((j, i) => traces.set(j.id, { ...fetched[i], final: !isActive(j) }));
  }

  function draw() {
    const list = chosen();
    const axis = X_AXES[view.x];
    const targets = numberList(targetsInput.value).filter(Number.isFinite);
    const spec = (field, yLabel, withTargets) => ({
      xLabel: axis.label, xFormat: axis.format, logX: view.logX, yLabel, sync: "compare",
      targets: withTargets ? targets : [],
      series: list.map((j, i) => ({ label: `#${j.id} ${j.solver} ${fmtParams(j.params, 3)}`, color: color(i),
        points: (traces.get(j.id)?.points ?? []).map((p) => [p[axis.field], p[field]]) })),
    });
    const scoreName = traces.get(list[0]?.id)?.score_name === "rmse" ? "test RMSE" : "test accuracy";
    if (!list.length) {
      scoreChart?.destroy(); objectiveChart?.destroy();
      scoreChart = objectiveChart = null;
      scoreBox.hidden = objectiveBox.hidden = true;
      tableBox.replaceChildren(h("p", { class: "empty" }, "Pick jobs above to compare them."));
      return;
    }
    scoreBox.hidden = objectiveBox.hidden = false;
    if (scoreChart) scoreChart.update(spec("test_score", scoreName, true));
    else scoreChart = new LineChart(scoreBox, spec("test_score", scoreName, true));
    if (objectiveChart) objectiveChart.update(spec("objective", "objective", false));
    else objectiveChart = new LineChart(objectiveBox, spec("objective", "objective", false));
    tableBox.replaceChildren(timeToTargetTable(list, traces, targets));
  }

  async function changed() {
    history.replaceState(null, "", `#/compare?dataset=${datasetId}&ids=${chosen().map((j) => j.id).join(",")}`);
    if (!targetsInput.value) targetsInput.value = defaultTargets(chosen()).join(", ");
    await loadTraces();
    draw();
  }

  // While a compared job runs: its status, then its checkpoints (in that order, so a trace read
  // after the job ended is complete).
  async function update() {
    const running = chosen().filter(isActive);
    if (!running.length) return true;
    for (const j of await Promise.all(running.map((r) => get(`/v1/jobs/${r.id}`, { signal })))) current.set(j.id, j);
    picker.update(pickable());
    await loadTraces();
    draw();
    return true;
  }

  datasetSelect.addEventListener("change", () => {
    datasetId = Number(datasetSelect.value);
    selected.clear();
    targetsInput.value = "";
    picker.update(pickable());
    changed();
  });
  targetsInput.addEventListener("change", draw);
  note.textContent = "Times to target are solver seconds (training only) at the first checkpoint that reached "
    + "the target; for a target the job did not ask for, they come from its checkpoints the same way.";

  main.append(
    h("div", { class: "filters" }, labelled("Data set", datasetSelect)),
    h("section", { "aria-labelledby": "pick-title" }, h("h2", { id: "pick-title" }, "Jobs"), picker.element),
    h("section", { "aria-labelledby": "ttt-title" }, h("h2", { id: "ttt-title" }, "Time to target"),
      h("div", { class: "filters" }, labelled("Targets", targetsInput)),
      tableBox, note),
    h("section", { "aria-labelledby": "curves-title" }, h("h2", { id: "curves-title" }, "Curves"),
      chartControls(view, draw), h("div", { class: "chart-pair" }, scoreBox, objectiveBox)));
  picker.update(pickable());
  await changed();
  every(POLL_MS, update, signal);
}

function defaultTargets(list) {
  return [...new Set(list.flatMap((j) => j.targets))].sort((a, b) => a - b);
}

// The first checkpoint whose test score reached `target` (accuracy >= target, RMSE <= target).
function reachedAt(trace, target) {
  const better = trace?.score_name === "rmse" ? (s) => s <= target : (s) => s >= target;
  return trace?.points.find((p) => p.test_score !== null && better(p.test_score))?.solver_seconds ?? null;
}

function secondsTo(job, trace, target) {
  const own = job.metrics?.time_to_target?.[String(target)];
  return own !== undefined ? own : reachedAt(trace, target);
}

function timeToTargetTable(list, traces, targets) {
  const fastest = targets.map((t) => Math.min(...list.map((j) => secondsTo(j, traces.get(j.id), t) ?? Infinity)));
  return h("div", { class: "table-wrap" }, h("table", { class: "ttt" },
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Job"),
      targets.map((t) => h("th", { scope: "col", class: "num" }, `to ${t}`)),
      ["Solver", "Parameters", "Status", "Test score", "Solver seconds"].map((l) => h("th", { scope: "col" }, l)))),
    h("tbody", {}, list.map((j, i) => h("tr", {},
      h("th", { scope: "row" }, h("span", { class: "swatch", style: { backgroundColor: color(i) }, "aria-hidden": "true" }), link(`#/jobs/${j.id}`, `#${j.id}`)),
      targets.map((t, k) => {
        const s = secondsTo(j, traces.get(j.id), t);
        const best = s !== null && s === fastest[k] && list.length > 1;
        return h("td", { class: best ? "num fastest" : "num" }, s === null ? (isActive(j) ? "not yet" : "not reached") : fmtSeconds(s),
          best ? h("span", { class: "tag" }, " fastest") : null);
      }),
      h("td", {}, j.solver), h("td", {}, fmtParams(j.params, 6)), h("td", {}, badge(j.status)),
      h("td", { class: "num" }, fmtNum(currentScore(j, traces.get(j.id)))),
      h("td", { class: "num" }, fmtSeconds(currentSeconds(j, traces.get(j.id)))))))));
}
