// Form fields built from JSON Schema (the OpenAPI document), and the API's problem+json errors
// shown next to the fields they name.

import { ApiError } from "./api.js";
import { alertBox, fmtNum, h, options, uniqueId } from "./dom.js";

// A client-side error in one field: only what cannot be sent at all (malformed JSON, no file).
export class FieldError extends Error {
  constructor(field, message) {
    super(message);
    this.status = 0;
    this.fieldErrors = [{ loc: field.split("."), msg: message }];
  }
}

// Submit handling shared by every form: `action` sends the request; a refusal (the API's
// problem+json or a FieldError) is shown next to the fields it names, and the button is
// disabled meanwhile so one click is one request.
export function onSubmit(form, button, action) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearProblem(form);
    button.disabled = true;
    try {
      await action();
    } catch (error) {
      if (!(error instanceof ApiError || error instanceof FieldError)) throw error;
      showProblem(form, error);
    } finally {
      button.disabled = false;
    }
  });
}

// A labelled field. `name` is the request path the API reports errors at ("params.p", "runs.0"),
// so an error with loc ["body", "params", "p"] finds this field.
export function field(name, label, control, hint) {
  control.id ||= uniqueId("field");
  const hintId = hint ? `${control.id}-hint` : null;
  const errorId = `${control.id}-error`;
  control.setAttribute("aria-describedby", [hintId, errorId].filter(Boolean).join(" "));
  return h("div", { class: "field", dataset: { field: name } },
    h("label", { for: control.id }, label),
    control,
    hint ? h("p", { class: "hint", id: hintId }, hint) : null,
    h("p", { class: "field-error", id: errorId, hidden: true }));
}

// A group of radio buttons or checkboxes, named like a field for errors.
export function fieldset(name, legend, ...children) {
  const errorId = uniqueId("fieldset-error");
  return h("fieldset", { class: "field", dataset: { field: name }, "aria-describedby": errorId },
    h("legend", {}, legend), ...children, h("p", { class: "field-error", id: errorId, hidden: true }));
}

// -- controls from JSON Schema ---------------------------------------------------------------------

// pydantic writes `X | None` as anyOf [X, {type: null}].
function unwrapOptional(schema) {
  const branches = schema.anyOf?.filter((s) => s.type !== "null");
  return branches?.length === 1 ? { ...schema, ...branches[0], optional: true } : schema;
}

export function schemaHint(schema) {
  const s = unwrapOptional(schema);
  const bits = [];
  if (s.description) bits.push(s.description);
  const lo = s.minimum ?? s.exclusiveMinimum;
  const hi = s.maximum ?? s.exclusiveMaximum;
  if (lo !== undefined || hi !== undefined) {
    bits.push(rangeText(lo, hi, { openLow: s.exclusiveMinimum !== undefined, openHigh: s.exclusiveMaximum !== undefined }));
  }
  if (s.default !== undefined && s.default !== null) bits.push(`default ${s.default}`);
  return bits.join("; ");
}

// "range [0, ∞)": a missing bound (undefined or null) is infinite, and open.
export function rangeText(lo, hi, { openLow = false, openHigh = false } = {}) {
  const none = (v) => v === undefined || v === null;
  const left = openLow || none(lo) ? "(" : "[";
  const right = openHigh || none(hi) ? ")" : "]";
  return `range ${left}${none(lo) ? "-∞" : fmtNum(lo)}, ${none(hi) ? "∞" : fmtNum(hi)}${right}`;
}

// An input for one schema property: a select for an enum, a number input with its bounds, text.
export function controlFor(name, schema) {
  const s = unwrapOptional(schema);
  if (s.enum) {
    return h("select", { name }, options(s.enum.map((v) => [v, v]), s.default));
  }
  if (s.type === "integer" || s.type === "number") {
    return h("input", {
      name, type: "number", inputmode: s.type === "integer" ? "numeric" : "decimal",
      step: s.type === "integer" ? "1" : "any",
      min: s.minimum ?? s.exclusiveMinimum, max: s.maximum ?? s.exclusiveMaximum,
      placeholder: s.default ?? "",
    });
  }
  return h("input", { name, type: "text", maxlength: s.maxLength, placeholder: s.default ?? "" });
}

// -- reading values ----------------------------------------------------------------------------

// "0.8, 0.84" -> [0.8, 0.84]. A token that is not a number is sent as it is, so the API's own
// validation names the field and the problem (one validator, not two that could disagree).
export function numberList(text) {
  return text.split(/[\s,;]+/).filter(Boolean).map((t) => (Number.isFinite(Number(t)) ? Number(t) : t));
}

// The value of a number input, or undefined when empty: JSON.stringify leaves the member out and
// the API's default applies.
export function numberOrUndefined(input) {
  return input.value.trim() === "" ? undefined : Number(input.value);
}

// -- errors --------------------------------------------------------------------------------------

export function clearProblem(form) {
  for (const el of form.querySelectorAll(".field-error")) {
    el.hidden = true;
    el.textContent = "";
  }
  for (const el of form.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
  form.querySelector(".form-problem")?.replaceChildren();
}

// The field named by the longest prefix of the error's location ("params.p", then "params").
function fieldFor(form, loc) {
  const path = (loc ?? []).map(String);
  if (path[0] === "body" || path[0] === "query") path.shift();
  for (let n = path.length; n > 0; n -= 1) {
    const el = form.querySelector(`[data-field="${CSS.escape(path.slice(0, n).join("."))}"]`);
    if (el) return el;
  }
  return null;
}

// Show a failed request: each field error next to its field, the rest and the summary on top.
export function showProblem(form, error) {
  clearProblem(form);
  const elsewhere = [];
  let first = null;
  for (const e of error.fieldErrors ?? []) {
    const el = fieldFor(form, e.loc);
    if (!el) {
      elsewhere.push(e.msg);
      continue;
    }
    const slot = el.querySelector(":scope > .field-error");
    slot.textContent = slot.textContent ? `${slot.textContent} ${e.msg}` : e.msg;
    slot.hidden = false;
    const control = el.querySelector("input, select, textarea");
    control?.setAttribute("aria-invalid", "true");
    first ??= control;
  }
  const summary = form.querySelector(".form-problem");
  summary.replaceChildren(alertBox(
    elsewhere.length ? [error.message, h("ul", {}, elsewhere.map((m) => h("li", {}, m)))] : error.message,
    { title: error.status === 422 ? "The service refused the request:" : `${error.status || "Error"}:` }));
  (first ?? summary).focus?.();
}

// The slot a form shows its summary in (above the submit button).
export function problemSlot() {
  return h("div", { class: "form-problem", tabindex: "-1" });
}
