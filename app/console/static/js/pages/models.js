// Models: the list, and one model's metadata, weight sparsity, test metrics (with its confusion
// matrix and ROC curve), what it learned (its weights by name, its warnings) and a predict box.

import { del, get, listAll, request } from "../api.js";
import { coefficientsSection, warningsView } from "../coefficients.js";
import { confirmInline } from "../confirm.js";
import { facts, fmtBytes, fmtNum, fmtPercent, fmtTime, h, link, paramsTable, setTitle, table } from "../dom.js";
import { FieldError, field, fieldset, onSubmit, problemSlot } from "../forms.js";
import { testMetricsSection } from "../test_metrics.js";

// Kernel models count support vectors where linear ones count non-zero weights.
const isKernel = (m) => /kernel/i.test(m.estimator);

function sparsity(m) {
  if (m.nnz_weights === null || m.nnz_weights === undefined) return "—";
  if (isKernel(m)) return `${fmtNum(m.nnz_weights)} support vectors`;
  const outputs = m.classes && m.classes.length > 2 ? m.classes.length : 1;
  const total = m.n_features * outputs;
  return `${fmtNum(m.nnz_weights)} of ${fmtNum(total)} weights non-zero (${fmtPercent(m.nnz_weights / total)})`;
}

const score = (m) => m.metrics?.test_accuracy ?? m.metrics?.test_rmse ?? null;

export async function list(main, { signal }) {
  setTitle("Models");
  const items = await listAll("/v1/models", { signal });
  main.append(h("h1", { tabindex: "-1" }, "Models"), table([
    { label: "Model", cell: (m) => link(`#/models/${m.id}`, `#${m.id}`) },
    { label: "Estimator", cell: (m) => m.estimator },
    { label: "Task", cell: (m) => m.task },
    { label: "Features", cell: (m) => fmtNum(m.n_features), numeric: true },
    { label: "Sparsity", cell: sparsity },
    { label: "Test score", cell: (m) => fmtNum(score(m)), numeric: true },
    { label: "Job", cell: (m) => (m.job_id ? link(`#/jobs/${m.job_id}`, `#${m.job_id}`) : "—") },
    { label: "Data set", cell: (m) => (m.dataset_id ? link(`#/datasets/${m.dataset_id}`, `#${m.dataset_id}`) : "—") },
    { label: "Created", cell: (m) => fmtTime(m.created_at) },
  ], items, { empty: "No model yet: a job that succeeds stores one." }));
}

export async function detail(main, { params: [id], signal }) {
  const model = await get(`/v1/models/${id}`, { signal });
  setTitle(`Model ${id}`);
  const deleteBox = h("div");
  const tested = testMetricsSection(model.metrics?.test);
  main.append(
    h("div", { class: "page-head" }, h("h1", { tabindex: "-1" }, `Model #${model.id}`, h("span", { class: "subtle" }, ` ${model.estimator}`)),
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
        ["Solver", model.solver], ["Task", model.task],
        ["Classes", model.classes ? model.classes.join(", ") : "—"],
        ["Features", fmtNum(model.n_features)], ["Weight sparsity", sparsity(model)],
        ["Trained by", model.job_id ? link(`#/jobs/${model.job_id}`, `job #${model.job_id}`) : "—"],
        ["Started from", model.init_model_id ? link(`#/models/${model.init_model_id}`, `model #${model.init_model_id}`) : "zero (a cold start)"],
        ["Data set", model.dataset_id ? link(`#/datasets/${model.dataset_id}`, `#${model.dataset_id}`) : "—"],
        ["Stored size", fmtBytes(model.size_bytes)], ["Created", fmtTime(model.created_at)],
      ])),
      h("section", {}, h("h2", {}, "Metrics"), facts(Object.entries(model.metrics ?? {})
        .filter(([, v]) => v === null || typeof v !== "object")
        .map(([k, v]) => [k.replaceAll("_", " "), typeof v === "number" ? fmtNum(v) : String(v)]))),
      h("section", {}, h("h2", {}, "Parameters"), paramsTable(model.params))),
    tested,
    coefficientsSection(model.coefficients, model.id),
    predictBox(model));
  tested?.drawCharts();
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
