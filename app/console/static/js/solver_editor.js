// The solver and its parameters, for a job (fields "solver", "params.<name>") or a study's run
// (prefix "runs.<i>."), built from the service's solver catalog (GET /v1/solvers): a choice of
// solver, the losses it accepts for the data set's task, and one input per parameter with its
// default and range. An empty input leaves the parameter to its default.

import { fmtNum, h, options } from "./dom.js";
import { field } from "./forms.js";
import { catalogTask } from "./catalog.js";

// ``auto``: the API's description of solver "auto" when the request takes it (a job's, not a
// study's run), offered after the catalog's solvers.
export function solverEditor(catalog, { prefix: firstPrefix = "", task = null, initial = {}, auto = null } = {}) {
  let prefix = firstPrefix;
  const solvers = auto ? [...catalog.solvers, autoSpec(catalog.solvers, auto)] : catalog.solvers;
  const select = h("select", { name: `${prefix}solver` },
    options(solvers.map((s) => [s.name, `${s.name}: ${s.title}`]), initial.solver ?? solvers[0].name));
  const about = h("p", { class: "hint" });
  const paramsBox = h("div", { class: "param-grid" });
  let dataTask = task;
  let controls = [];

  // The solver's entry for the data set's task (its first before a data set is chosen).
  const entryOf = (spec) => spec.tasks.find((t) => t.task === catalogTask(dataTask)) ?? spec.tasks[0];

  const render = () => {
    // What the user typed survives a change of solver or task where the parameter still exists.
    const typed = { ...initial.params, ...readControls() };
    const spec = solvers.find((s) => s.name === select.value) ?? solvers[0];
    const entry = entryOf(spec);
    about.replaceChildren(spec.about ?? `${spec.paper}, ${spec.algorithm}. ${entry.estimator}.`);
    controls = entry.params.map((p) => ({ name: p.name, ...paramControl(p, typed[p.name]) }));
    paramsBox.replaceChildren(...controls.map((c) => {
      c.el.name = `${prefix}params.${c.name}`;
      return field(`${prefix}params.${c.name}`, c.name, c.el, c.hint);
    }));
  };
  const readControls = () => {
    const params = {};
    for (const c of controls) {
      const v = c.read();
      if (v !== undefined) params[c.name] = v;
    }
    return params;
  };
  const setTask = (newTask) => {
    dataTask = newTask;
    for (const option of select.options) {
      const spec = solvers.find((s) => s.name === option.value);
      option.disabled = Boolean(newTask) && !spec.tasks.some((t) => t.task === catalogTask(newTask));
    }
    if (select.selectedOptions[0]?.disabled) {
      select.value = [...select.options].find((o) => !o.disabled)?.value ?? select.value;
    }
    render();
  };
  select.addEventListener("change", render);
  setTask(task);
  const element = h("div", { class: "solver-editor" },
    field(`${prefix}solver`, "Solver", select), about,
    h("div", { class: "field", dataset: { field: `${prefix}params` } },
      h("p", { class: "group-label" }, "Parameters (empty: the default)"), paramsBox,
      h("p", { class: "field-error", hidden: true })));
  return {
    element,
    setTask,
    // A study's runs are renumbered when one is removed: the inputs follow (the other fields'
    // data-field names are the caller's to rename).
    setPrefix(newPrefix) {
      prefix = newPrefix;
      select.name = `${prefix}solver`;
      render();
    },
    value() {
      return { solver: select.value, params: readControls() };
    },
  };
}

// "auto" as a catalog entry: the service chooses pgs, sdca or lbfgs when the job is created and
// checks the params against its choice. pgs's parameters are offered: they include sdca's and
// lbfgs's, and pgs takes every loss either takes.
function autoSpec(solvers, description) {
  const pgs = solvers.find((s) => s.name === "pgs");
  return { ...pgs, name: "auto", title: "chosen from the data", about: description };
}

// A bound as the hint shows it: the service's 1e12 as 1e+12, not thirteen digits.
function boundText(x) {
  return Math.abs(x) >= 1e12 ? x.toExponential() : fmtNum(x);
}

function paramHint(p) {
  const bits = [p.description.replace(/\.$/, "")];
  const r = p.range;
  if (r) bits.push(`${r.min_inclusive ? "[" : "("}${boundText(r.min)}, ${boundText(r.max)}${r.max_inclusive ? "]" : ")"}`);
  if (p.range && p.choices) bits.push(`or ${p.choices.map((c) => `"${c}"`).join(", ")}`);
  if (p.nullable) bits.push("or none");
  bits.push(`default ${p.default === null ? "none" : p.default}`);
  return bits.join("; ");
}

const shown = (v) => (v === null ? "none" : typeof v === "object" ? JSON.stringify(v) : String(v));

// One parameter's input, its hint and how to read it (undefined: leave it to the default).
function paramControl(p, initial) {
  const hint = p.type === "object" ? `${paramHint(p)}; or a JSON object, e.g. {"label": 2}` : paramHint(p);
  if (p.type === "boolean" || (p.type === "string" && p.choices)) {
    const values = p.type === "boolean" ? [true, false] : p.choices;
    const el = h("select", {}, h("option", { value: "" }, `default (${shown(p.default)})`),
      values.map((v, i) => h("option", { value: String(i), selected: initial !== undefined && v === initial }, String(v))));
    return { el, hint, read: () => (el.value === "" ? undefined : values[Number(el.value)]) };
  }
  // A number alone is a number input; a number or a keyword ("auto", none) is typed as text.
  const keywords = [...(p.choices ?? []), ...(p.nullable && p.default !== null ? ["none"] : [])];
  const numeric = !keywords.length;
  const el = h("input", {
    type: numeric ? "number" : "text", step: numeric ? (p.type === "integer" ? "1" : "any") : undefined,
    inputmode: p.type === "integer" ? "numeric" : "decimal", autocomplete: "off", spellcheck: "false",
    min: numeric && p.range?.min_inclusive ? p.range.min : undefined,
    max: numeric && p.range?.max_inclusive ? p.range.max : undefined,
    placeholder: shown(p.default), value: initial === undefined ? "" : shown(initial),
  });
  const read = () => {
    const text = el.value.trim();
    if (text === "") return undefined;
    if (text === "none" && p.nullable) return null;
    // A mapping (class_weight: label to weight) is typed as a JSON object; one that does not
    // parse goes as typed, and the API names it.
    if (p.type === "object" && text.startsWith("{")) {
      try { return JSON.parse(text); } catch { return text; }
    }
    // Anything else that is not a number goes as typed: the API names what it refuses.
    return p.choices?.includes(text) || !Number.isFinite(Number(text)) ? text : Number(text);
  };
  return { el, hint, read };
}
