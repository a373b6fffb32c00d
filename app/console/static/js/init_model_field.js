// A warm start in the new-job form: the stored model (its id or name@alias) whose weights and
// fitted preprocessing the fit starts from (the job body's init_model); empty: a cold start.

import { h } from "./dom.js";
import { field, schemaHint } from "./forms.js";

export function initModelField(schema, preselect) {
  const input = h("input", { type: "text", name: "init_model", autocomplete: "off", spellcheck: "false",
    placeholder: "none: start from zero, or e.g. 12 or churn@prod", value: preselect ?? "" });
  return {
    element: field("init_model", "Start from model", input, schemaHint(schema)),
    // Merged into the body: a number for an id, the text for name@alias (the API names what it refuses).
    apply(body) {
      const text = input.value.trim();
      if (text === "") return body;
      return { ...body, init_model: /^\d+$/.test(text) ? Number(text) : text };
    },
  };
}
