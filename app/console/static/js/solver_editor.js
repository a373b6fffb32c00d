// The solver and its parameters, for a job (fields "solver", "params.<name>") or a study's run
// (prefix "runs.<i>."). With the service's solver catalog: a choice of solver, its losses, and
// one input per parameter with its default and range. Without it: the solver's name and its
// parameters as a JSON object.

import { h, options } from "./dom.js";
import { FieldError, field, rangeText } from "./forms.js";
import { solverFits } from "./catalog.js";

const NUMBER_TYPES = new Set(["float", "int", "integer", "number"]);
const BOOL_TYPES = new Set(["bool", "boolean"]);

export function solverEditor(catalog, { prefix = "", task = null, initial = {} } = {}) {
  return catalog.solvers
    ? catalogEditor(catalog.solvers, prefix, task, initial)
    : jsonEditor(catalog, prefix, initial);
}

function jsonEditor(catalog, prefix, initial) {
  const solverSchema = catalog.schemas.JobCreate.properties.solver;
  const solver = h("input", { type: "text", name: `${prefix}solver`, value: initial.solver ?? solverSchema.default ?? "",
    autocomplete: "off", spellcheck: "false" });
  const params = h("textarea", { name: `${prefix}params`, rows: "4", spellcheck: "false", class: "code",
    value: JSON.stringify(initial.params ?? catalog.exampleParams, null, 1).replace(/\n\s*/g, " ") });
  const element = h("div", { class: "solver-editor" },
    h("div", { class: "form-grid" }, field(`${prefix}solver`, "Solver", solver, solverSchema.description)),
    field(`${prefix}params`, "Parameters (JSON object)", params,
      "The estimator's parameters; the service checks them before queueing and names any it refuses."));
  return {
    element,
    setTask() {},
    value() {
      let parsed;
      try {
        parsed = params.value.trim() ? JSON.parse(params.value) : {};
      } catch (error) {
        throw new FieldError(`${prefix}params`, `not valid JSON: ${error.message}`);
      }
      return { solver: solver.value.trim(), params: parsed };
    },
  };
}

function catalogEditor(solvers, prefix, task, initial) {
  const select = h("select", { name: `${prefix}solver` },
    options(solvers.map((s) => [s.name, s.title ? `${s.name}: ${s.title}` : s.name]), initial.solver ?? solvers[0].name));
  const about = h("p", { class: "hint" });
  const paramsBox = h("div", { class: "param-grid" });
  let controls = [];

  const render = () => {
    const spec = solvers.find((s) => s.name === select.value) ?? solvers[0];
    about.replaceChildren([spec.algorithm, spec.paper].filter(Boolean).join(" · "));
    controls = [];
    const fields = [];
    if (spec.losses?.length) {
      const loss = h("select", { name: `${prefix}params.loss` },
        h("option", { value: "" }, "default"), options(spec.losses.map((l) => [l, l]), initial.params?.loss));
      controls.push({ name: "loss", el: loss, read: () => loss.value || undefined });
      fields.push(field(`${prefix}params.loss`, "loss", loss));
    }
    for (const p of spec.params ?? []) {
      if (p.name === "loss" && spec.losses?.length) continue;
      const { el, read } = paramControl(p, initial.params?.[p.name]);
      el.name = `${prefix}params.${p.name}`;
      controls.push({ name: p.name, el, read });
      fields.push(field(`${prefix}params.${p.name}`, p.name, el, paramHint(p)));
    }
    paramsBox.replaceChildren(...fields);
  };
  const setTask = (newTask) => {
    for (const option of select.options) {
      const spec = solvers.find((s) => s.name === option.value);
      option.disabled = Boolean(newTask) && !solverFits(spec, newTask);
    }
    if (select.selectedOptions[0]?.disabled) {
      select.value = [...select.options].find((o) => !o.disabled)?.value ?? select.value;
      render();
    }
  };
  select.addEventListener("change", render);
  render();
  setTask(task);
  const element = h("div", { class: "solver-editor" },
    field(`${prefix}solver`, "Solver", select), about,
    h("div", { class: "field", dataset: { field: `${prefix}params` } },
      h("p", { class: "group-label" }, "Parameters (empty: the default)"), paramsBox,
      h("p", { class: "field-error", hidden: true })));
  return {
    element,
    setTask,
    value() {
      const params = {};
      for (const c of controls) {
        const v = c.read();
        if (v !== undefined) params[c.name] = v;
      }
      return { solver: select.value, params };
    },
  };
}

function paramHint(p) {
  const bits = [];
  if (p.description) bits.push(p.description);
  if (Array.isArray(p.range)) bits.push(rangeText(p.range[0], p.range[1]));
  if (p.default !== undefined) bits.push(`default ${p.default === null ? "none" : p.default}`);
  return bits.join("; ");
}

// One parameter's input and how to read it (undefined: leave it to the default).
function paramControl(p, initial) {
  if (Array.isArray(p.choices)) {
    const el = h("select", {}, h("option", { value: "" }, `default (${p.default ?? "none"})`),
      p.choices.map((c, i) => h("option", { value: String(i), selected: initial !== undefined && c === initial }, String(c))));
    return { el, read: () => (el.value === "" ? undefined : p.choices[Number(el.value)]) };
  }
  if (BOOL_TYPES.has(p.type)) {
    const el = h("select", {}, options([["", `default (${p.default})`], ["true", "true"], ["false", "false"]], initial));
    return { el, read: () => (el.value === "" ? undefined : el.value === "true") };
  }
  if (NUMBER_TYPES.has(p.type)) {
    const [lo, hi] = Array.isArray(p.range) ? p.range : [];
    const el = h("input", { type: "number", step: "any", inputmode: "decimal", min: lo ?? undefined,
      max: hi ?? undefined, placeholder: p.default ?? "", value: initial ?? "" });
    return { el, read: () => (el.value.trim() === "" ? undefined : Number(el.value)) };
  }
  const el = h("input", { type: "text", placeholder: p.default ?? "", value: initial ?? "", spellcheck: "false" });
  return { el, read: () => (el.value.trim() === "" ? undefined : el.value.trim()) };
}
