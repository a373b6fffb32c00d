// Jobs: the live list (status, solver, key parameters, progress, current test score, solver
// seconds), filters, cancel, and a selection to compare.

import { get, listAll } from "../api.js";
import { loadCatalog } from "../catalog.js";
import { badge, fmtNum, fmtParams, fmtPercent, fmtSeconds, fmtTime, h, labelled, link, options, progressBar, setTitle } from "../dom.js";
import { cancelButton, currentScore, currentSeconds, isActive, traceOf } from "../jobs_common.js";
import { LiveTable } from "../live_table.js";
import { every, POLL_MS } from "../poll.js";

const STATUSES = ["queued", "running", "succeeded", "failed", "cancelled"];
const PAGE = 100;
// Running jobs whose latest checkpoint is fetched on each update (for their current score).
const MAX_TRACES = 12;

export async function list(main, { query, signal }) {
  setTitle("Jobs");
  const filters = {
    status: query.get("status") ?? "",
    dataset: query.get("dataset") ?? "",
    solver: query.get("solver") ?? "",
  };
  let limit = PAGE;
  const [datasets, catalog] = await Promise.all([listAll("/v1/datasets", { signal }), loadCatalog()]);
  const datasetName = new Map(datasets.map((d) => [d.id, d.name]));
  const selected = new Set();
  const traces = new Map();

  const statusSelect = h("select", {},
    options([["", "any status"], ...STATUSES.map((s) => [s, s])], filters.status));
  const datasetSelect = h("select", {},
    options([["", "any data set"], ...datasets.map((d) => [d.id, `${d.name} (#${d.id})`])], filters.dataset));
  const solverSelect = h("select", {},
    options([["", "any solver"], ...catalog.solvers.map((s) => [s.name, s.name])], filters.solver));
  const compareButton = h("button", { type: "button", class: "primary", disabled: true }, "Compare selected");
  const summary = h("p", { class: "subtle", role: "status" });
  const more = h("button", { type: "button", hidden: true }, "Show older jobs");

  const table = new LiveTable([
    { label: "Select", cell: (j) => h("input", { type: "checkbox", "aria-label": `Select job ${j.id} to compare`,
      checked: selected.has(j.id), onchange: (e) => toggle(j.id, e.target.checked) }) },
    { label: "Job", cell: (j) => link(`#/jobs/${j.id}`, `#${j.id}`) },
    { label: "Status", live: true, cell: (j) => badge(j.status) },
    { label: "Solver", cell: (j) => j.solver },
    { label: "Data set", cell: (j) => (j.dataset_id ? link(`#/datasets/${j.dataset_id}`, datasetName.get(j.dataset_id) ?? `#${j.dataset_id}`) : "—") },
    { label: "Parameters", cell: (j) => h("span", { title: JSON.stringify(j.params) }, fmtParams(j.params)) },
    { label: "Progress", live: true, cell: (j) => progressBar(j.progress.fraction, `Progress of job ${j.id}`),
      update: (td, j) => updateProgress(td, j) },
    { label: "Test score", numeric: true, live: true, cell: (j) => fmtNum(currentScore(j, traces.get(j.id)), 4) },
    { label: "Solver seconds", numeric: true, live: true, cell: (j) => fmtSeconds(currentSeconds(j, traces.get(j.id))) },
    { label: "Created", class: "wide-only", cell: (j) => fmtTime(j.created_at) },
    { label: "Actions", live: true, cell: (j) => (isActive(j) && !j.cancel_requested ? cancelButton(j, refresh) : ""),
      update: (td, j) => { if (!isActive(j) || j.cancel_requested) td.replaceChildren(); } },
  ], { empty: "No job matches. Start one from New job." });

  function toggle(id, on) {
    if (on) selected.add(id);
    else selected.delete(id);
    compareButton.disabled = selected.size < 1;
    compareButton.textContent = `Compare selected (${selected.size})`;
  }

  function filterUrl() {
    const q = new URLSearchParams(Object.entries(filters).filter(([, v]) => v));
    return `#/jobs${q.size ? `?${q}` : ""}`;
  }

  // The API filters (status, data set, solver); the page shows what it answers.
  function listPath() {
    const q = new URLSearchParams({ limit: String(limit) });
    if (filters.status) q.set("status", filters.status);
    if (filters.dataset) q.set("dataset_id", filters.dataset);
    if (filters.solver) q.set("solver", filters.solver);
    return `/v1/jobs?${q}`;
  }

  async function refresh() {
    const page = await get(listPath(), { signal });
    const shown = page.items;
    const running = shown.filter((j) => j.status === "running").slice(0, MAX_TRACES);
    const fetched = await Promise.all(running.map((j) => traceOf(j.id, signal).catch(() => null)));
    running.forEach((j, i) => traces.set(j.id, fetched[i]));
    table.update(shown);
    more.hidden = !page.next_cursor;
    summary.textContent = `${shown.length} job${shown.length === 1 ? "" : "s"} shown`
      + `${page.next_cursor ? " (the newest; more below)" : ""}; updated live.`;
  }

  const onFilter = () => {
    filters.status = statusSelect.value;
    filters.dataset = datasetSelect.value;
    filters.solver = solverSelect.value;
    history.replaceState(null, "", filterUrl());
    refresh();
  };
  for (const s of [statusSelect, datasetSelect, solverSelect]) s.addEventListener("change", onFilter);
  compareButton.addEventListener("click", () => {
    location.hash = `#/compare?ids=${[...selected].sort((a, b) => a - b).join(",")}`;
  });
  more.addEventListener("click", () => {
    limit += PAGE;
    refresh();
  });

  main.append(
    h("div", { class: "page-head" }, h("h1", { tabindex: "-1" }, "Jobs"),
      h("a", { class: "button primary", href: "#/jobs/new" }, "New job")),
    h("div", { class: "filters", role: "group", "aria-label": "Filters" },
      labelled("Status", statusSelect), labelled("Data set", datasetSelect), labelled("Solver", solverSelect),
      compareButton),
    summary, table.element, more);
  await refresh();
  every(POLL_MS, refresh, signal);
}

function updateProgress(td, job) {
  const bar = td.querySelector("progress");
  bar.value = job.progress.fraction ?? 0;
  td.querySelector(".progress-text").textContent = fmtPercent(job.progress.fraction);
}
