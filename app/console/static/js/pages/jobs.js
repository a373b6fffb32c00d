// Jobs: the live list (name and tags, status, solver, key parameters, progress with the time left,
// current test score, solver seconds), searched, filtered, sorted and paged by the API; cancel,
// and a selection to compare.

import { listAll } from "../api.js";
import { loadCatalog } from "../catalog.js";
import { badge, fmtNum, fmtParams, fmtSeconds, fmtTime, h, link, progressBar, setTitle, tagList } from "../dom.js";
import { cancelButton, currentScore, currentSeconds, isActive, traceOf } from "../jobs_common.js";
import { ServerList } from "../list_view.js";
import { LiveTable } from "../live_table.js";
import { every, POLL_MS } from "../poll.js";

const STATUSES = ["queued", "running", "succeeded", "failed", "cancelled"];
const PAGE = 100;
// Running jobs whose latest checkpoint is fetched on each update (for their current score).
const MAX_TRACES = 12;

export async function list(main, { query, signal }) {
  setTitle("Jobs");
  const [datasets, catalog] = await Promise.all([listAll("/v1/datasets", { signal }), loadCatalog()]);
  const datasetName = new Map(datasets.map((d) => [d.id, d.name]));
  const selected = new Set();
  const traces = new Map();
  const compareButton = h("button", { type: "button", class: "primary", disabled: true }, "Compare selected");

  const view = new ServerList({
    path: "/v1/jobs", route: "#/jobs", query, signal, noun: "job", pageSize: PAGE,
    selects: [
      { name: "status", label: "Status", choices: STATUSES.map((s) => [s, s]) },
      { name: "dataset", param: "dataset_id", label: "Data set", choices: datasets.map((d) => [d.id, `${d.name} (#${d.id})`]) },
      { name: "solver", label: "Solver", choices: catalog.solvers.map((s) => [s.name, s.name]) },
    ],
    render: async (items) => {
      const running = items.filter((j) => j.status === "running").slice(0, MAX_TRACES);
      const fetched = await Promise.all(running.map((j) => traceOf(j.id, signal).catch(() => null)));
      running.forEach((j, i) => traces.set(j.id, fetched[i]));
      table.update(items);
    },
  });

  const table = new LiveTable([
    { label: "Select", cell: (j) => h("input", { type: "checkbox", "aria-label": `Select job ${j.id} to compare`,
      checked: selected.has(j.id), onchange: (e) => toggle(j.id, e.target.checked) }) },
    { label: view.sortHeader("Job", "id"), cell: (j) => link(`#/jobs/${j.id}`, `#${j.id}`) },
    { label: view.sortHeader("Name", "name"), cell: (j) => h("span", {}, j.name ?? "—", " ", j.tags?.length ? tagList(j.tags) : "") },
    { label: view.sortHeader("Status", "status"), live: true, cell: (j) => badge(j.status) },
    { label: view.sortHeader("Solver", "solver"), cell: (j) => j.solver },
    { label: "Data set", cell: (j) => (j.dataset_id ? link(`#/datasets/${j.dataset_id}`, datasetName.get(j.dataset_id) ?? `#${j.dataset_id}`) : "—") },
    { label: "Parameters", cell: (j) => h("span", { title: JSON.stringify(j.params) }, fmtParams(j.params)) },
    { label: "Progress", live: true, cell: (j) => progressCell(j) },
    { label: "Test score", numeric: true, live: true, cell: (j) => fmtNum(currentScore(j, traces.get(j.id)), 4) },
    { label: "Solver seconds", numeric: true, live: true, cell: (j) => fmtSeconds(currentSeconds(j, traces.get(j.id))) },
    { label: view.sortHeader("Created", "created_at"), class: "wide-only", cell: (j) => fmtTime(j.created_at) },
    { label: "Actions", live: true, cell: (j) => (isActive(j) && !j.cancel_requested ? cancelButton(j, refresh) : ""),
      update: (td, j) => { if (!isActive(j) || j.cancel_requested) td.replaceChildren(); } },
  ], { empty: "No job matches. Start one from New job." });

  function toggle(id, on) {
    if (on) selected.add(id);
    else selected.delete(id);
    compareButton.disabled = selected.size < 1;
    compareButton.textContent = `Compare selected (${selected.size})`;
  }

  const refresh = () => view.load();
  compareButton.addEventListener("click", () => {
    location.hash = `#/compare?ids=${[...selected].sort((a, b) => a - b).join(",")}`;
  });
  view.controls.append(compareButton);
  main.append(
    h("div", { class: "page-head" }, h("h1", { tabindex: "-1" }, "Jobs"),
      h("a", { class: "button primary", href: "#/jobs/new" }, "New job")),
    view.controls, view.summary, table.element, view.pager);
  await refresh();
  every(POLL_MS, refresh, signal);
}

// Before the job's own fit the bar counts another phase's fits (progress.phase).
const phaseNote = (phase) => (phase === "select_sigma" ? " choosing sigma" : phase === "choose_threshold" ? " choosing threshold" : "");

// The progress bar, with the time left while it runs (progress.eta_s: the rate so far).
function progressCell(job) {
  const eta = job.status === "running" && job.progress.eta_s !== null && job.progress.eta_s !== undefined
    ? h("span", { class: "subtle eta" }, ` ${fmtSeconds(job.progress.eta_s)} left${phaseNote(job.progress.phase)}`) : null;
  return h("span", {}, progressBar(job.progress.fraction, `Progress of job ${job.id}`), eta);
}
