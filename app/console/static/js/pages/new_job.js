// New job: a form over POST /v1/jobs, built from the solver catalog and the OpenAPI schema (see
// catalog.js), with the API's problem+json errors shown next to the fields they name.

import { newIdempotencyKey, post } from "../api.js";
import { dataFields, trainingFormPage } from "../data_fields.js";
import { alertBox, h, link } from "../dom.js";
import { field, numberList, numberOrUndefined, onSubmit, problemSlot, schemaHint } from "../forms.js";
import { initModelField } from "../init_model_field.js";
import { selectionFields } from "../selection_fields.js";
import { solverEditor } from "../solver_editor.js";

export async function render(main, { query, signal }) {
  const loaded = await trainingFormPage(main, "New job", signal);
  if (!loaded) return;
  const { catalog, datasets } = loaded;
  const schema = catalog.schemas.JobCreate.properties;
  const example = catalog.schemas.JobCreate.examples?.[0] ?? {};
  const byId = new Map(datasets.map((d) => [d.id, d]));
  const started = [];

  const data = dataFields(datasets, { schema, example, preselect: query.get("dataset") });
  const solver = solverEditor(catalog, {
    task: byId.get(Number(data.dataset.value))?.task,
    auto: schema.solver?.enum?.includes("auto") ? schema.solver.description : null,
  });
  data.dataset.addEventListener("change", () => solver.setTask(byId.get(Number(data.dataset.value))?.task));
  const selection = selectionFields(catalog.schemas.Selection);
  const initModel = initModelField(schema.init_model, query.get("init_model"));
  const targets = h("input", { type: "text", inputmode: "decimal", placeholder: "e.g. 0.8, 0.84", autocomplete: "off" });
  const budget = h("input", { type: "number", step: "any", min: "0", inputmode: "decimal", placeholder: "none" });
  const weightColumn = h("input", { type: "text", name: "weight_column", placeholder: "none: every row weighs 1", autocomplete: "off", spellcheck: "false" });
  const submit = h("button", { type: "submit", class: "primary" }, "Start job");
  const result = h("div", { role: "status" });
  let idempotencyKey = newIdempotencyKey();

  const form = h("form", { class: "panel form", novalidate: true, "aria-label": "New job" },
    h("h2", {}, "Data"), data.element,
    h("div", { class: "form-grid" },
      field("weight_column", "Weight column", weightColumn, schema.weight_column?.description ?? "")),
    h("h2", {}, "Solver"), solver.element,
    h("h2", {}, "Sigma"), selection.element,
    h("h2", {}, "Warm start"), initModel.element,
    h("h2", {}, "Targets and budget"),
    h("div", { class: "form-grid" },
      field("targets", "Targets", targets, `${schemaHint(schema.targets)}; comma-separated`),
      field("time_budget_s", "Time budget (solver seconds)", budget, schemaHint(schema.time_budget_s))),
    problemSlot(), h("div", { class: "actions" }, submit), result);

  onSubmit(form, submit, async () => {
    result.replaceChildren();
    const body = initModel.apply(selection.apply({
      ...data.value(), ...solver.value(),
      targets: numberList(targets.value), time_budget_s: numberOrUndefined(budget),
      weight_column: weightColumn.value.trim() || undefined,
    }));
    const job = await post("/v1/jobs", body, { headers: { "Idempotency-Key": idempotencyKey } });
    idempotencyKey = newIdempotencyKey(); // the next submit is a new job
    started.push(job.id);
    result.replaceChildren(alertBox(h("span", {}, "Job ", link(`#/jobs/${job.id}`, `#${job.id}`), " queued.",
      " Change the parameters to start another",
      started.length > 1 ? [", or ", link(`#/compare?ids=${started.join(",")}`, `compare the ${started.length} jobs started here`)] : null,
      "."), { kind: "success" }));
  });
  main.append(form);
}
