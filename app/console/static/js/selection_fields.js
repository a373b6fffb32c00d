// sigma "auto" in the new-job form: a switch that sends params.sigma "auto", and the job body's
// selection options (fields "selection.<name>", built from the OpenAPI schema's Selection, each
// with its documented default); an empty field leaves the option to its default.

import { h } from "./dom.js";
import { field, numberList, schemaHint } from "./forms.js";

// The options as typed; folds and patience also take a word (auto, validation, none).
const TEXT = { folds: "auto, validation or a number >= 2", grid: "comma-separated sigmas, each > 0", patience: "a number >= 1, or none" };

export function selectionFields(schema) {
  const props = schema.properties;
  const on = h("input", { type: "checkbox", name: "sigma-auto" });
  const inputs = Object.fromEntries(Object.keys(props).map((name) => [name, name === "metric"
    ? h("select", { name: `selection.${name}` }, ["", ...props.metric.enum].map((v) => h("option", { value: v }, v || "default (auto)")))
    : h("input", { type: "text", name: `selection.${name}`, autocomplete: "off", spellcheck: "false", inputmode: name === "folds" || name === "patience" ? "text" : "decimal" })]));
  const grid = h("div", { class: "form-grid" }, Object.entries(inputs).map(([name, el]) =>
    field(`selection.${name}`, name.replaceAll("_", " "), el, [TEXT[name], schemaHint(props[name])].filter(Boolean).join("; "))));
  grid.hidden = true;
  on.addEventListener("change", () => { grid.hidden = !on.checked; });
  const element = h("div", { class: "field", dataset: { field: "selection" } },
    h("label", { class: "inline" }, on, " choose sigma by cross-validation (sigma \"auto\": a regularisation path)"),
    grid, h("p", { class: "field-error", hidden: true }));

  const read = (name) => {
    const text = inputs[name].value.trim();
    if (text === "") return undefined;
    if (name === "grid") return numberList(text);
    if (name === "metric") return text;
    if (text === "none") return null;
    // A word goes as typed: the API names what it refuses.
    return Number.isFinite(Number(text)) ? Number(text) : text;
  };
  return {
    element,
    // Merged into the body: params.sigma "auto" and the options given, or nothing.
    apply(body) {
      if (!on.checked) return body;
      const selection = Object.fromEntries(Object.keys(inputs).map((n) => [n, read(n)]).filter(([, v]) => v !== undefined));
      return { ...body, params: { ...body.params, sigma: "auto" }, selection };
    },
  };
}
