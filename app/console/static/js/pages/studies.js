// Studies: the live list, and the form that starts one (runs x sizes x repeats jobs).

import { listAll, post } from "../api.js";
import { dataFields, trainingFormPage } from "../data_fields.js";
import { badge, fmtNum, fmtTime, h, link, progressBar, setTitle } from "../dom.js";
import { field, numberList, numberOrUndefined, onSubmit, problemSlot, schemaHint } from "../forms.js";
import { ServerList } from "../list_view.js";
import { LiveTable } from "../live_table.js";
import { every, POLL_MS } from "../poll.js";
import { solverEditor } from "../solver_editor.js";

export async function list(main, { query, signal }) {
  setTitle("Studies");
  const datasets = new Map((await listAll("/v1/datasets", { signal })).map((d) => [d.id, d.name]));
  const view = new ServerList({
    path: "/v1/studies", route: "#/studies", query, signal, noun: "study", pageSize: 100,
    render: (items) => table.update(items),
  });
  // Studies have no tags: the search and the sort are theirs, the tag box is not.
  view.controls.querySelector("[data-filter=tag]").closest(".labelled").remove();
  const table = new LiveTable([
    { label: view.sortHeader("Study", "id"), cell: (s) => link(`#/studies/${s.id}`, `#${s.id}`) },
    { label: view.sortHeader("Name", "name"), cell: (s) => s.name ?? "—" },
    { label: "Status", live: true, cell: (s) => badge(s.status) },
    { label: "Data set", cell: (s) => (s.dataset_id ? link(`#/datasets/${s.dataset_id}`, datasets.get(s.dataset_id) ?? `#${s.dataset_id}`) : "—") },
    { label: "Runs", cell: (s) => s.runs.map((r) => r.label ?? r.solver).join("; ") },
    { label: "Sizes m", cell: (s) => s.sizes.map((m) => fmtNum(m)).join(", ") },
    { label: "Repeats", numeric: true, cell: (s) => s.repeats },
    { label: "Progress", live: true, cell: (s) => h("span", {}, progressBar(s.progress.fraction, `Progress of study ${s.id}`),
      h("span", { class: "subtle" }, ` ${s.progress.done}/${s.progress.total} jobs`)) },
    { label: view.sortHeader("Created", "created_at"), cell: (s) => fmtTime(s.created_at) },
  ], { empty: "No study matches." });
  const refresh = () => view.load();
  main.append(
    h("div", { class: "page-head" }, h("h1", { tabindex: "-1" }, "Studies"),
      h("a", { class: "button primary", href: "#/studies/new" }, "New study")),
    h("p", { class: "subtle" }, "A study trains each run on seeded subsamples of m rows, for each m and each repeat, "
      + "and measures the solver seconds to each target accuracy: the paper's time against training-set size."),
    view.controls, view.summary, table.element, view.pager);
  await refresh();
  every(POLL_MS * 2, refresh, signal);
}

// -- the form --------------------------------------------------------------------------------------

export async function create(main, { signal }) {
  const loaded = await trainingFormPage(main, "New study", signal);
  if (!loaded) return;
  const { catalog, datasets } = loaded;
  const schema = catalog.schemas.StudyCreate.properties;
  const byId = new Map(datasets.map((d) => [d.id, d]));
  const data = dataFields(datasets, { schema, seedName: "seed", allowNone: false });
  const taskOf = () => byId.get(Number(data.dataset.value))?.task;
  const runsBox = h("div", { class: "runs" });
  const runs = [];

  const renumber = () => runs.forEach((run, i) => {
    run.heading.textContent = `Run ${i + 1}`;
    run.editor.setPrefix(`runs.${i}.`);
    for (const el of run.element.querySelectorAll("[data-field]")) {
      el.dataset.field = el.dataset.field.replace(/^runs\.\d+/, `runs.${i}`);
    }
  });
  const addRun = () => {
    const i = runs.length;
    const editor = solverEditor(catalog, { prefix: `runs.${i}.`, task: taskOf() });
    const label = h("input", { type: "text", maxlength: "80", placeholder: "default: solver and loss/p" });
    const heading = h("h3", {}, `Run ${i + 1}`);
    const run = { editor, label, heading };
    const remove = h("button", { type: "button", class: "small" }, "Remove this run");
    remove.addEventListener("click", () => {
      if (runs.length === 1) return;
      runs.splice(runs.indexOf(run), 1);
      run.element.remove();
      renumber();
    });
    run.element = h("div", { class: "run panel" }, h("div", { class: "page-head" }, heading, remove),
      editor.element, field(`runs.${i}.label`, "Legend label", label));
    runs.push(run);
    runsBox.append(run.element);
  };
  data.dataset.addEventListener("change", () => runs.forEach((r) => r.editor.setTask(taskOf())));
  addRun();

  const name = h("input", { type: "text", maxlength: "255", autocomplete: "off" });
  const sizes = h("input", { type: "text", inputmode: "numeric", placeholder: "e.g. 50, 100, 200", autocomplete: "off" });
  const repeats = h("input", { type: "number", step: "1", min: "1", inputmode: "numeric", value: schema.repeats.default });
  const targets = h("input", { type: "text", inputmode: "decimal", placeholder: "e.g. 0.8, 0.84", autocomplete: "off" });
  const budget = h("input", { type: "number", step: "any", min: "0", inputmode: "decimal", placeholder: "none" });
  const sigmaOn = h("input", { type: "checkbox" });
  const grid = h("input", { type: "text", inputmode: "decimal", placeholder: "e.g. 0.0001, 0.001, 0.01", autocomplete: "off" });
  const validation = h("input", { type: "number", step: "any", min: "0", max: "1", inputmode: "decimal", value: 0.2 });
  const submit = h("button", { type: "submit", class: "primary" }, "Start study");

  const form = h("form", { class: "panel form", novalidate: true, "aria-label": "New study" },
    field("name", "Name", name, schema.name.description),
    h("h2", {}, "Data"), data.element,
    h("h2", {}, "Runs"), h("div", { class: "field", dataset: { field: "runs" } }, runsBox,
      h("p", { class: "field-error", hidden: true })),
    h("button", { type: "button", onclick: addRun }, "Add a run"),
    h("h2", {}, "Sizes, repeats and targets"),
    h("div", { class: "form-grid" },
      field("sizes", "Training-set sizes m", sizes, `${schemaHint(schema.sizes)}; comma-separated`),
      field("repeats", "Repeats", repeats, schemaHint(schema.repeats)),
      field("targets", "Targets", targets, `${schemaHint(schema.targets)}; comma-separated`),
      field("time_budget_s", "Time budget per job (solver seconds)", budget, schemaHint(schema.time_budget_s))),
    h("details", {}, h("summary", {}, "Choose sigma per job on validation data"),
      h("div", { class: "form-grid" },
        h("label", { class: "inline" }, sigmaOn, " choose sigma from a grid (leave sigma out of the runs' parameters)"),
        field("select_sigma.grid", "Sigma grid", grid, "comma-separated, each > 0"),
        field("select_sigma.validation_fraction", "Validation fraction", validation, "part of each job's m rows held out to score the grid"))),
    problemSlot(), h("div", { class: "actions" }, submit));

  onSubmit(form, submit, async () => {
    const body = {
      name: name.value.trim() || undefined, ...data.value(),
      runs: runs.map((r) => ({ ...r.editor.value(), label: r.label.value.trim() || undefined })),
      sizes: numberList(sizes.value), repeats: numberOrUndefined(repeats), targets: numberList(targets.value),
      time_budget_s: numberOrUndefined(budget),
      select_sigma: sigmaOn.checked ? { grid: numberList(grid.value), validation_fraction: numberOrUndefined(validation) } : undefined,
    };
    const study = await post("/v1/studies", body);
    location.hash = `#/studies/${study.id}`;
  });
  main.append(form);
}
