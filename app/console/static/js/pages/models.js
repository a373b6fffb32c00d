// Models: the registry list (searched, filtered by tag, sorted and paged by the API), and one
// model's name, version, aliases (moved from the page), tags and description (edited), exports,
// metadata, weight sparsity, test metrics (with its confusion
// matrix and ROC curve), what it learned (its weights by name, its warnings) and a predict box.

import { del, download, get, listAll, request } from "../api.js";
import { reporting } from "../banner.js";
import { coefficientsSection, warningsView } from "../coefficients.js";
import { confirmInline } from "../confirm.js";
import { facts, fill, fmtBytes, fmtNum, fmtPercent, fmtTime, h, link, options, paramsTable, setTitle, table, tagList } from "../dom.js";
import { FieldError, field, fieldset, onSubmit, problemSlot } from "../forms.js";
import { ServerList } from "../list_view.js";
import { testMetricsSection } from "../test_metrics.js";

// Kernel models count support vectors where linear ones count non-zero weights, over the
// model's own weight count (n_weights: after one-hot encoding, not the raw columns).
const isKernel = (m) => /kernel/i.test(m.estimator);

function sparsity(m) {
  if (m.nnz_weights === null || m.nnz_weights === undefined) return "—";
  if (isKernel(m)) return `${fmtNum(m.nnz_weights)} support vectors`;
  if (!m.n_weights) return `${fmtNum(m.nnz_weights)} weights non-zero`;
  return `${fmtNum(m.nnz_weights)} of ${fmtNum(m.n_weights)} weights non-zero (${fmtPercent(m.nnz_weights / m.n_weights)})`;
}

const score = (m) => m.metrics?.test_accuracy ?? m.metrics?.test_rmse ?? null;

const modelTitle = (m) => (m.name ? `${m.name} v${m.version}` : `Model #${m.id}`);

// The training set by name: the live data set's, or the snapshot a model keeps once it is deleted.
const datasetNames = new Map();

async function nameDatasets(models, signal) {
  const ids = [...new Set(models.map((m) => m.dataset_id).filter((id) => id && !datasetNames.has(id)))];
  // A data set deleted since the list was read keeps its id in the cell.
  await Promise.all(ids.map((id) => get(`/v1/datasets/${id}`, { signal })
    .then((ds) => datasetNames.set(id, ds.name), () => null)));
}

function trainingSet(m) {
  if (m.dataset_id) return link(`#/datasets/${m.dataset_id}`, datasetNames.get(m.dataset_id) ?? `#${m.dataset_id}`);
  if (m.training_dataset) return h("span", { class: "deleted-dataset" }, `${m.training_dataset.name} (deleted)`);
  return "—";
}

export async function list(main, { query, signal }) {
  setTitle("Models");
  const slot = h("div");
  const datasets = await listAll("/v1/datasets", { signal });
  for (const d of datasets) datasetNames.set(d.id, d.name);
  const view = new ServerList({
    path: "/v1/models", route: "#/models", query, signal, noun: "model",
    selects: [
      { name: "dataset", param: "dataset_id", label: "Data set", choices: datasets.map((d) => [d.id, `${d.name} (#${d.id})`]) },
    ],
    render: async (items) => {
      await nameDatasets(items, signal);
      fill(slot, table(columns, items, { empty: "No model matches: a job that succeeds stores one.", rowKey: (m) => m.id }));
    },
  });
  const columns = [
    { label: view.sortHeader("Model", "id"), cell: (m) => link(`#/models/${m.id}`, `#${m.id}`) },
    { label: view.sortHeader("Name", "name"), cell: (m) => m.name ?? "—" },
    { label: view.sortHeader("Version", "version"), cell: (m) => fmtNum(m.version), numeric: true },
    { label: "Tags", cell: (m) => tagList(m.tags) },
    { label: view.sortHeader("Estimator", "estimator"), cell: (m) => m.estimator },
    { label: "Features", cell: (m) => fmtNum(m.n_features), numeric: true },
    { label: "Sparsity", cell: sparsity },
    { label: "Test score", cell: (m) => fmtNum(score(m)), numeric: true },
    { label: "Training set", cell: trainingSet },
    { label: view.sortHeader("Created", "created_at"), cell: (m) => fmtTime(m.created_at) },
  ];
  main.append(h("h1", { tabindex: "-1" }, "Models"), view.controls, view.summary, slot, view.pager);
  await view.load();
}

export async function detail(main, context) {
  const { params: [id], signal } = context;
  const model = await get(`/v1/models/${id}`, { signal });
  await nameDatasets([model], signal);
  const aliases = model.name ? (await get(`/v1/aliases?name=${encodeURIComponent(model.name)}`, { signal })).items : [];
  setTitle(modelTitle(model));
  const reload = () => { main.replaceChildren(); return detail(main, context); };
  const deleteBox = h("div");
  const tested = testMetricsSection(model.metrics?.test);
  main.append(
    h("div", { class: "page-head" }, h("h1", { tabindex: "-1" }, modelTitle(model), h("span", { class: "subtle" }, ` #${model.id} ${model.estimator}`)),
      h("a", { class: "button", href: `#/jobs/new?init_model=${model.id}` }, "Refresh on new rows…"),
      h("button", { type: "button", class: "danger", onclick: () => confirmInline(deleteBox, {
        question: `Delete model ${model.id} and its files? Its job keeps its metrics.`,
        confirmLabel: `Delete model ${model.id}`,
        run: async () => { await del(`/v1/models/${model.id}`); location.hash = "#/models"; },
      }) }, "Delete…")),
    deleteBox,
    warningsView(model.warnings),
    h("div", { class: "columns" },
      h("section", {}, h("h2", {}, "Model"), facts([
        ["Name", model.name ? `${model.name}, version ${model.version}` : "none (not registered)"],
        ["Aliases", aliasesHere(model, aliases)],
        ["Tags", tagList(model.tags)],
        ["Description", model.description ?? "—"],
        ["Solver", model.solver], ["Task", model.task],
        ["Classes", model.classes ? model.classes.join(", ") : "—"],
        ["Features", fmtNum(model.n_features)], ["Weight sparsity", sparsity(model)],
        ["Trained by", model.job_id ? link(`#/jobs/${model.job_id}`, `job #${model.job_id}`) : "—"],
        ["Started from", model.init_model_id ? link(`#/models/${model.init_model_id}`, `model #${model.init_model_id}`) : "zero (a cold start)"],
        ["Training set", trainingSet(model)],
        ["Stored size", fmtBytes(model.size_bytes)], ["Created", fmtTime(model.created_at)],
      ])),
      h("section", {}, h("h2", {}, "Metrics"), facts(Object.entries(model.metrics ?? {})
        .filter(([, v]) => v === null || typeof v !== "object")
        .map(([k, v]) => [k.replaceAll("_", " "), typeof v === "number" ? fmtNum(v) : String(v)]))),
      h("section", {}, h("h2", {}, "Parameters"), paramsTable(model.params)),
      h("section", {}, h("h2", {}, "Preprocessing"), paramsTable(model.preprocessing, "None: the raw features."))),
    exportsSection(model),
    labelsForm(model, reload),
    model.name ? aliasForm(model, aliases, reload) : null,
    tested,
    coefficientsSection(model.coefficients, model.id),
    predictBox(model));
  tested?.drawCharts();
}

function aliasesHere(model, aliases) {
  const here = aliases.filter((a) => a.model_id === model.id);
  if (!here.length) return "—";
  return h("span", { class: "tags" }, here.map((a) => h("code", { class: "alias" }, a.ref)));
}

// Export buttons: each downloads the file GET /v1/models/{id}/export?format= answers.
function exportsSection(model) {
  const status = h("p", { class: "subtle", role: "status" });
  const button = (format, label) => h("button", { type: "button", "data-export": format, onclick: reporting(`The ${label} export failed:`, async () => {
    await download(`/v1/models/${model.id}/export?format=${format}`, `model-${model.id}.${format}`);
    status.textContent = `Downloaded model-${model.id}.${format}.`;
  }) }, `Download ${label}`);
  return h("section", { "aria-labelledby": "export-title" }, h("h2", { id: "export-title" }, "Export"),
    h("div", { class: "exports" }, button("npz", "npz"), button("json", "JSON"),
      isKernel(model) ? null : button("onnx", "ONNX")),
    status);
}

// Name, description and tags, changed with PATCH /v1/models/{id}.
function labelsForm(model, reload) {
  const name = h("input", { type: "text", value: model.name ?? "", maxlength: "255", autocomplete: "off" });
  const description = h("textarea", { rows: "2", value: model.description ?? "" });
  const tags = h("input", { type: "text", value: (model.tags ?? []).join(", "), autocomplete: "off" });
  const submit = h("button", { type: "submit", class: "primary" }, "Save");
  const form = h("form", { class: "panel", "aria-labelledby": "labels-title", novalidate: true },
    h("h2", { id: "labels-title" }, "Name, description and tags"),
    h("div", { class: "form-grid" },
      field("name", "Model name", name, "Registering it under a new name makes it that name's next version"),
      field("description", "Description", description),
      field("tags", "Tags", tags, "comma-separated")),
    problemSlot(), h("div", { class: "actions" }, submit));
  onSubmit(form, submit, async () => {
    const body = {
      description: description.value.trim() || null,
      tags: tags.value.split(",").map((t) => t.trim()).filter(Boolean),
    };
    if (name.value.trim() !== (model.name ?? "")) body.name = name.value.trim() || null;
    await request(`/v1/models/${model.id}`, { method: "PATCH", json: body });
    await reload();
  });
  return form;
}

// Point an alias of the model's name (an existing one, or a new one) at this version, asked twice.
function aliasForm(model, aliases, reload) {
  const elsewhere = aliases.filter((a) => a.model_id !== model.id);
  const pick = h("select", {}, options([...elsewhere.map((a) => [a.alias, `${a.ref} (now v${a.version ?? "?"}, #${a.model_id})`]), ["", "a new alias…"]], elsewhere[0]?.alias ?? ""));
  const fresh = h("input", { type: "text", placeholder: "e.g. production", autocomplete: "off", maxlength: "64" });
  const confirmBox = h("div");
  const submit = h("button", { type: "submit" }, "Move alias here…");
  const form = h("form", { class: "panel", "aria-labelledby": "alias-title", novalidate: true },
    h("h2", { id: "alias-title" }, "Aliases"),
    h("p", { class: "subtle" }, `Predict with ${model.name}@ALIAS; moving an alias here makes it answer with this version.`),
    h("div", { class: "form-grid" }, field("alias", "Alias", pick), field("new_alias", "New alias", fresh)),
    problemSlot(), h("div", { class: "actions" }, submit), confirmBox);
  const sync = () => { fresh.disabled = pick.value !== ""; };
  pick.addEventListener("change", sync);
  sync();
  onSubmit(form, submit, async () => {
    const alias = pick.value || fresh.value.trim();
    if (!alias) throw new FieldError("new_alias", "Name the alias.");
    const current = aliases.find((a) => a.alias === alias);
    confirmInline(confirmBox, {
      question: current
        ? `Move ${model.name}@${alias} from model #${current.model_id} to model #${model.id}?`
        : `Create ${model.name}@${alias} pointing at model #${model.id}?`,
      confirmLabel: `Point ${model.name}@${alias} here`,
      run: async () => {
        await request(`/v1/aliases/${encodeURIComponent(`${model.name}@${alias}`)}`, { method: "PUT", json: { model_id: model.id } });
        await reload();
      },
    });
  });
  return form;
}

function predictBox(model) {
  const text = h("textarea", { rows: "6", class: "code", spellcheck: "false",
    placeholder: "svmlight lines, e.g.\n1:0.5 3:1.25\n+1 2:1 7:-0.5\n\nor JSON rows: [[0.1, 0, 1], {\"indices\": [0, 2], \"values\": [0.1, 1]}]" });
  const asText = h("input", { type: "radio", name: "predict-format", value: "text", checked: true });
  const asJson = h("input", { type: "radio", name: "predict-format", value: "json" });
  const answer = h("div", { role: "status", "aria-live": "polite" });
  const submit = h("button", { type: "submit", class: "primary" }, "Predict");
  // A paste that looks like JSON switches the format (the user can switch it back).
  text.addEventListener("input", () => {
    if (/^\s*[[{]/.test(text.value)) asJson.checked = true;
  });
  const form = h("form", { class: "panel", "aria-labelledby": "predict-title", novalidate: true },
    h("h2", { id: "predict-title" }, "Predict"),
    field("instances", "Rows to predict", text,
      `svmlight: one row per line, indices as in the uploaded file (${model.n_features} features), the label optional. `
      + "JSON: dense rows of n_features numbers or {indices (0-based), values}."),
    fieldset("format", "Format", h("label", { class: "inline" }, asText, " svmlight text"),
      h("label", { class: "inline" }, asJson, " JSON rows")),
    problemSlot(), h("div", { class: "actions" }, submit), answer);
  onSubmit(form, submit, async () => {
    answer.replaceChildren();
    const result = await request(`/v1/models/${model.id}/predict`, { method: "POST", ...predictBody(text.value, asJson.checked) });
    answer.replaceChildren(predictions(model, result));
  });
  return form;
}

function predictBody(value, json) {
  if (!json) return { body: value, headers: { "Content-Type": "text/plain" } };
  let parsed;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new FieldError("instances", `not valid JSON: ${error.message}`);
  }
  // A bare list of rows is taken as the "instances" of the request.
  return { json: Array.isArray(parsed) ? { instances: parsed } : parsed };
}

function predictions(model, result) {
  const rows = result.predictions.map((p, i) => ({ i, p, score: result.scores[i], probs: result.probabilities?.[i] }));
  const classes = model.classes ?? [];
  return h("div", {}, h("h3", {}, `${rows.length} prediction${rows.length === 1 ? "" : "s"}`), table([
    { label: "Row", cell: (r) => r.i + 1, numeric: true },
    { label: "Prediction", cell: (r) => String(r.p) },
    { label: "Score", cell: (r) => (Array.isArray(r.score) ? r.score.map((s) => fmtNum(s)).join(", ") : fmtNum(r.score)), numeric: true },
    ...(result.probabilities ? classes.map((c, k) => ({ label: `P(${c})`, cell: (r) => fmtNum(r.probs[k]), numeric: true })) : []),
  ], rows));
}
