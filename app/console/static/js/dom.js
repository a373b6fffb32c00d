// DOM building and number formatting shared by every page. Text always goes in as text nodes
// (never innerHTML), so names from the API cannot inject markup.

// Properties set after the children exist (a <select>'s value needs its options first).
const PROPERTIES = new Set(["value", "checked", "selected", "indeterminate"]);

export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  const later = [];
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "class") el.className = value;
    else if (name === "dataset") Object.assign(el.dataset, value);
    // Through the CSSOM: the page's Content-Security-Policy refuses style="" attributes.
    else if (name === "style") Object.assign(el.style, value);
    else if (PROPERTIES.has(name)) later.push([name, value]);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  el.append(...flatten(children));
  for (const [name, value] of later) el[name] = value;
  return el;
}

// replaceChildren() that, like h(), skips null/false children and flattens arrays.
export function fill(el, ...children) {
  el.replaceChildren(...flatten(children));
  return el;
}

function flatten(children) {
  return children.flat(Infinity)
    .filter((c) => c !== null && c !== undefined && c !== false)
    .map((c) => (c instanceof Node ? c : String(c)));
}

export function setTitle(text) {
  document.title = `${text} · PGS console`;
}

let uid = 0;
export function uniqueId(prefix) {
  uid += 1;
  return `${prefix}-${uid}`;
}

// -- formatting --------------------------------------------------------------------------------

const DASH = "—";

export function fmtNum(x, digits = 4) {
  if (x === null || x === undefined || Number.isNaN(x)) return DASH;
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return x.toLocaleString("en-US");
  const a = Math.abs(x);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return x.toExponential(digits - 1);
  return String(Number(x.toPrecision(digits)));
}

export function fmtSeconds(s) {
  if (s === null || s === undefined) return DASH;
  if (s === 0) return "0 s";
  if (s < 1e-3) return `${Number((s * 1e6).toPrecision(3))} µs`;
  if (s < 1) return `${Number((s * 1e3).toPrecision(3))} ms`;
  if (s < 120) return `${Number(s.toPrecision(3))} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

export function fmtBytes(n) {
  if (n === null || n === undefined) return DASH;
  const units = ["B", "KB", "MB", "GB"];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i += 1; }
  return `${i === 0 ? n : n.toPrecision(3)} ${units[i]}`;
}

export function fmtTime(iso) {
  if (!iso) return DASH;
  const d = new Date(iso);
  const pad = (v) => String(v).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} `
    + `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function fmtPercent(fraction) {
  if (fraction === null || fraction === undefined) return DASH;
  return `${(100 * fraction).toFixed(fraction < 0.1 && fraction > 0 ? 1 : 0)} %`;
}

// Parameters as "loss=logistic p=1.8": the few a table row has room for, in the API's order.
export function fmtParams(params, limit = 4) {
  const entries = Object.entries(params ?? {}).filter(([k]) => k !== "random_state");
  const text = entries.map(([k, v]) => `${k}=${typeof v === "number" ? fmtNum(v) : v}`);
  return text.length > limit ? `${text.slice(0, limit).join(" ")} …` : text.join(" ");
}

// -- small components ----------------------------------------------------------------------------

export function badge(status) {
  return h("span", { class: `badge status-${status}` }, status);
}

export function progressBar(fraction, label) {
  const value = fraction ?? 0;
  return h("span", { class: "progress" },
    h("progress", { max: "1", value, "aria-label": label }),
    h("span", { class: "progress-text" }, fmtPercent(fraction)));
}

export function link(href, text) {
  return h("a", { href }, text);
}

// A control with its label, as one unit that wraps as a whole (filter bars).
export function labelled(text, control) {
  control.id ||= uniqueId("control");
  return h("span", { class: "labelled" }, h("label", { for: control.id }, text), control);
}

// A table from column specs: {label, cell(row) -> node or text, class, numeric}.
export function table(columns, rows, { caption, empty = "Nothing yet.", rowKey } = {}) {
  if (!rows.length) return h("p", { class: "empty" }, empty);
  return h("div", { class: "table-wrap" },
    h("table", {},
      caption ? h("caption", {}, caption) : null,
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", {
        scope: "col", class: c.numeric ? "num" : c.class ?? null }, c.label)))),
      h("tbody", {}, rows.map((row) => h("tr", { dataset: rowKey ? { key: rowKey(row) } : {} },
        columns.map((c) => h("td", { class: c.numeric ? "num" : c.class ?? null }, c.cell(row))))))));
}

// An object's members as a two-column table (parameters as the API holds them).
export function paramsTable(params, empty = "All defaults.") {
  const entries = Object.entries(params ?? {});
  if (!entries.length) return h("p", { class: "empty" }, empty);
  return table([
    { label: "Parameter", cell: ([k]) => k },
    { label: "Value", cell: ([, v]) => h("code", {}, JSON.stringify(v)) },
  ], entries);
}

// Label-value pairs as a description list.
export function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.filter(Boolean).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

export function alertBox(message, { kind = "error", title } = {}) {
  return h("div", { class: `alert alert-${kind}`, role: kind === "error" ? "alert" : "status" },
    title ? h("strong", {}, title, " ") : null, message);
}

// Select options from [value, text] pairs.
export function options(pairs, selected) {
  return pairs.map(([value, text]) => h("option", { value, selected: String(value) === String(selected) }, text));
}

// Tags as small labels ("—" for none).
export function tagList(tags) {
  if (!tags?.length) return DASH;
  return h("span", { class: "tags" }, tags.map((t) => h("span", { class: "tag" }, t)));
}
