// Datasets: the list, an upload (file picker or drag and drop, with progress and the API's
// options), and one data set's page with its jobs and models and a delete.

import { del, get, upload } from "../api.js";
import { ServerList } from "../list_view.js";
import { loadCatalog } from "../catalog.js";
import { confirmInline } from "../confirm.js";
import { alertBox, badge, facts, fill, fmtBytes, fmtNum, fmtParams, fmtTime, h, link, setTitle, table, tagList } from "../dom.js";
import { FieldError, controlFor, field, onSubmit, problemSlot, schemaHint } from "../forms.js";

const UPLOAD_OPTIONS = ["name", "format", "task", "label_column", "header", "zero_based", "na_values"];

// A data set uploaded with labelled=false has no task: its rows are there to be predicted.
function taskText(ds) {
  return ds.labelled === false ? "no labels" : ds.task;
}

function classesText(ds) {
  if (!ds.classes) return ds.task === "regression" ? "numeric" : "—";
  const shown = ds.classes.slice(0, 6).join(", ");
  return ds.classes.length > 6 ? `${shown}, … (${ds.classes.length})` : shown;
}

export function datasetLabel(ds) {
  return `${ds.name} (#${ds.id}, ${fmtNum(ds.n_samples)} × ${fmtNum(ds.n_features)}, ${taskText(ds)})`;
}

function columnsFor(view) {
  return [
    { label: view.sortHeader("Name", "name"), cell: (d) => link(`#/datasets/${d.id}`, d.name) },
    { label: view.sortHeader("ID", "id"), cell: (d) => d.id, numeric: true },
    { label: "Tags", cell: (d) => tagList(d.tags) },
    { label: view.sortHeader("Rows", "n_samples"), cell: (d) => fmtNum(d.n_samples), numeric: true },
    { label: view.sortHeader("Features", "n_features"), cell: (d) => fmtNum(d.n_features), numeric: true },
    { label: "Non-zeros", cell: (d) => fmtNum(d.nnz), numeric: true },
    { label: "Task", cell: taskText },
    { label: "Label", cell: (d) => d.label_name ?? "—" },
    { label: "Classes", cell: classesText },
    { label: view.sortHeader("File", "size_bytes"), cell: (d) => `${d.format}${d.compressed ? " (gzip)" : ""}, ${fmtBytes(d.size_bytes)}` },
    { label: view.sortHeader("Added", "created_at"), cell: (d) => fmtTime(d.created_at) },
  ];
}

export async function list(main, { query, signal }) {
  setTitle("Datasets");
  const catalog = await loadCatalog();
  const slot = h("div");
  const view = new ServerList({
    path: "/v1/datasets", route: "#/datasets", query, signal, noun: "data set",
    render: (items) => fill(slot, table(columns, items, { empty: "No data set matches: upload one above.", rowKey: (d) => d.id })),
  });
  const columns = columnsFor(view);
  main.append(
    h("h1", { tabindex: "-1" }, "Datasets"),
    uploadPanel(catalog.schemas.upload, () => view.change({})),
    h("section", { "aria-labelledby": "datasets-list" },
      h("h2", { id: "datasets-list" }, "Data sets"), view.controls, view.summary, slot, view.pager));
  await view.load();
}

function uploadPanel(schema, onUploaded) {
  const fileInput = h("input", { type: "file", name: "file", accept: ".svm,.txt,.libsvm,.csv,.tsv,.gz,.bz2,.xz,.svmlight,.data,.parquet,.arrow,.feather" });
  const chosen = h("span", { class: "chosen-file" }, "No file chosen");
  const drop = h("div", { class: "drop-zone", "data-testid": "drop-zone" },
    h("p", {}, "Drop an svmlight/LIBSVM or CSV file (gzip allowed), or a Parquet or Arrow file here, or "),
    field("file", "Choose a file", fileInput, schema.properties.file.description), chosen);
  const optionFields = UPLOAD_OPTIONS.map((name) => {
    const s = schema.properties[name];
    const control = controlFor(name, s);
    // The missing-value markers show as the list they are, to edit rather than retype.
    if (name === "na_values") control.defaultValue = s.default;
    return field(name, name.replace("_", " "), control, schemaHint(s));
  });
  const bar = h("progress", { max: "1", value: 0, "aria-label": "Upload progress" });
  const barText = h("span", { class: "progress-text" });
  const progress = h("div", { class: "upload-progress", hidden: true }, bar, barText);
  const submit = h("button", { type: "submit", class: "primary" }, "Upload");
  const result = h("div", { role: "status" });
  let file = null;

  const choose = (f) => {
    file = f;
    chosen.textContent = f ? `${f.name} (${fmtBytes(f.size)})` : "No file chosen";
  };
  fileInput.addEventListener("change", () => choose(fileInput.files[0] ?? null));
  drop.addEventListener("dragover", (e) => {
    e.preventDefault();
    drop.classList.add("dragging");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("dragging"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("dragging");
    if (e.dataTransfer.files.length) choose(e.dataTransfer.files[0]);
  });

  const form = h("form", { class: "panel", "aria-labelledby": "upload-title", novalidate: true },
    h("h2", { id: "upload-title" }, "Upload a data set"), drop,
    h("details", {}, h("summary", {}, "Options (name, format, task, label column, CSV header, index base, missing values)"),
      h("div", { class: "form-grid" }, optionFields)),
    problemSlot(), h("div", { class: "actions" }, submit, progress), result);
  onSubmit(form, submit, async () => {
    result.replaceChildren();
    if (!file) throw new FieldError("file", "Choose a file first.");
    const data = new FormData();
    data.append("file", file, file.name);
    for (const name of UPLOAD_OPTIONS) {
      const value = form.elements[name].value.trim();
      if (value !== "") data.append(name, value);
    }
    const show = (f) => {
      bar.value = f;
      barText.textContent = f < 1 ? `${Math.round(100 * f)} %` : "100 %, parsing…";
    };
    show(0);
    progress.hidden = false;
    try {
      const ds = await upload("/v1/datasets", data, show);
      result.replaceChildren(alertBox(h("span", {}, "Uploaded ", link(`#/datasets/${ds.id}`, ds.name),
        `: ${fmtNum(ds.n_samples)} rows × ${fmtNum(ds.n_features)} features, ${taskText(ds)}.`), { kind: "success" }));
      choose(null);
      form.reset();
      await onUploaded();
    } finally {
      progress.hidden = true;
    }
  });
  return form;
}

// -- one data set ------------------------------------------------------------------------------

// A text column's categories, most frequent first, "(empty)" for the empty or missing cell.
const SHOWN_CATEGORIES = 8;

function topCategories(c) {
  const shown = c.top_categories.slice(0, SHOWN_CATEGORIES).map((t) => `${t.value === "" ? "(empty)" : t.value} ${fmtNum(t.count)}`);
  return `${shown.join(", ")}${c.distinct > SHOWN_CATEGORIES ? `, … (${fmtNum(c.distinct)}${c.categories_truncated ? "+" : ""} in all)` : ""}`;
}

// What the file says about its columns: the label, the features by name, the text columns
// (one-hot encoded by a job's default preprocessing) and the missing cells (imputed).
function schemaFacts(ds) {
  const names = ds.feature_names;
  const textNames = (ds.text_columns ?? []).map((i) => names?.[i] ?? `#${i}`);
  const taskNote = ds.labelled === false ? ds.task_note : ds.task_source === "declared"
    ? `${ds.task} (declared at upload)`
    : `${ds.task} (guessed from the labels; declare it at upload or change it with PATCH if that is wrong)`;
  return h("section", { "aria-labelledby": "schema-title", class: "dataset-schema" },
    h("h2", { id: "schema-title" }, "Schema"),
    facts([
      ["Label", ds.labelled === false ? "none (rows to predict)" : ds.label_name ?? (ds.format === "svmlight" ? "the first field of each line" : "—")],
      ["Task", taskNote],
      ["Feature names", names?.length ? names.join(", ") : "none (indices only)"],
      ["Text columns", textNames.length ? textNames.join(", ") : "none"],
      ["Missing cells", fmtNum(ds.n_missing)],
    ]));
}

// The first columns' statistics the API shows with the data set (what a job's preprocessing
// learns); the rest are a page away in the API.
function columnsSection(ds) {
  const page = ds.columns;
  if (ds.columns_status === "pending") {
    return h("p", { class: "empty" }, "The column statistics are being computed; reload shortly.");
  }
  if (!page) return h("p", { class: "empty" }, "The column statistics cannot be read.");
  const occurring = page.listed === "occurring" ? " with a value" : "";
  return h("section", { "aria-labelledby": "columns-title" },
    h("h2", { id: "columns-title" }, `Columns${occurring} (${fmtNum(page.total)})`),
    table([
      { label: "Column", cell: (c) => (c.name === null ? `#${c.index}` : `${c.name} (#${c.index})`) },
      { label: "Kind", cell: (c) => c.kind },
      { label: "Missing", cell: (c) => fmtNum(c.missing), numeric: true },
      { label: "Mean", cell: (c) => fmtNum(c.mean), numeric: true },
      { label: "Std", cell: (c) => fmtNum(c.std), numeric: true },
      { label: "Min", cell: (c) => fmtNum(c.min), numeric: true },
      { label: "Max", cell: (c) => fmtNum(c.max), numeric: true },
      { label: "Categories (most frequent)", cell: (c) => (c.kind === "text" ? topCategories(c) : "") },
    ], page.items, { empty: "No column.", rowKey: (c) => c.index }),
    page.total > page.items.length
      ? h("p", { class: "subtle" }, `The first ${page.items.length}; GET /v1/datasets/${ds.id}/columns lists all.`)
      : null);
}

const OWN_PAGE = 100;

// Under a section that shows only the newest of its rows: where the whole list is.
function moreThanShown(more, noun, href) {
  return more ? h("p", { class: "subtle" }, `The newest ${OWN_PAGE} ${noun}; `, link(href, `all ${noun} of this data set`), ".") : null;
}

export async function detail(main, { params: [id], signal }) {
  const ds = await get(`/v1/datasets/${id}`, { signal });
  setTitle(ds.name);
  // The API filters by data set: the page holds the newest OWN_PAGE of each kind and links to
  // the full, filtered list when there are more.
  const [trained, evaluated, models] = await Promise.all([
    get(`/v1/jobs?dataset_id=${id}&limit=${OWN_PAGE}`, { signal }),
    get(`/v1/jobs?test_dataset_id=${id}&limit=${OWN_PAGE}`, { signal }),
    get(`/v1/models?dataset_id=${id}&limit=${OWN_PAGE}`, { signal })]);
  const ownJobs = [...new Map([...trained.items, ...evaluated.items].map((j) => [j.id, j])).values()]
    .sort((a, b) => b.id - a.id);
  const ownModels = models.items;
  const deleteBox = h("div", {});
  main.append(
    h("h1", { tabindex: "-1" }, ds.name, h("span", { class: "subtle" }, ` data set #${ds.id}`)),
    h("div", { class: "actions" },
      h("a", { class: "button primary", href: `#/jobs/new?dataset=${id}` }, "New job on this data set"),
      h("a", { class: "button", href: `#/compare?dataset=${id}` }, "Compare its jobs"),
      h("button", { type: "button", class: "danger", onclick: () => confirmInline(deleteBox, {
        question: `Delete "${ds.name}" and its stored file? Finished jobs keep their results.`,
        confirmLabel: `Delete data set ${ds.id}`,
        // 409 while queued or running jobs use it; the API says which.
        run: async () => { await del(`/v1/datasets/${ds.id}`); location.hash = "#/datasets"; },
      }) }, "Delete…")),
    deleteBox,
    facts([
      ["Rows", fmtNum(ds.n_samples)], ["Features", fmtNum(ds.n_features)],
      ["Non-zeros", `${fmtNum(ds.nnz)} (${fmtNum(100 * ds.nnz / Math.max(1, ds.n_samples * ds.n_features), 3)} % dense)`],
      ["Classes", classesText(ds)], ["Tags", tagList(ds.tags)], ["Description", ds.description ?? "—"],
      ["Format", `${ds.format}${ds.compressed ? ", gzip" : ""}${ds.format === "svmlight" ? `, ${ds.index_base}-based indices` : ""}`],
      ["File size", fmtBytes(ds.size_bytes)], ["SHA-256", h("code", { class: "hash" }, ds.sha256)],
      ["Uploaded", fmtTime(ds.created_at)],
    ]),
    schemaFacts(ds),
    columnsSection(ds),
    h("h2", {}, "Jobs"),
    moreThanShown(trained.next_cursor || evaluated.next_cursor, "jobs", `#/jobs?dataset=${id}`),
    table([
      { label: "Job", cell: (j) => link(`#/jobs/${j.id}`, `#${j.id}`) },
      { label: "Status", cell: (j) => badge(j.status) },
      { label: "Solver", cell: (j) => j.solver },
      { label: "Parameters", cell: (j) => fmtParams(j.params) },
      { label: "Role", cell: (j) => (j.dataset_id === id ? "training" : "evaluation") },
      { label: "Created", cell: (j) => fmtTime(j.created_at) },
    ], ownJobs, { empty: "No job has used this data set." }),
    h("h2", {}, "Models"),
    moreThanShown(models.next_cursor, "models", `#/models?dataset=${id}`),
    table([
      { label: "Model", cell: (m) => link(`#/models/${m.id}`, `#${m.id}`) },
      { label: "Estimator", cell: (m) => m.estimator },
      { label: "From job", cell: (m) => (m.job_id ? link(`#/jobs/${m.job_id}`, `#${m.job_id}`) : "—") },
      { label: "Created", cell: (m) => fmtTime(m.created_at) },
    ], ownModels, { empty: "No model trained on this data set." }));
}
