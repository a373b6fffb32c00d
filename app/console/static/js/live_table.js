// A table that is updated in place as polling brings new data: rows are keyed by id, cells whose
// column is `live` are redrawn, the others (links, checkboxes, buttons) are built once, so focus
// and selection survive every update.

import { h } from "./dom.js";

export class LiveTable {
  // columns: [{label, numeric, cell(item) -> node, live}]; a live column may also have
  // update(td, item) to change its node instead of replacing it.
  constructor(columns, { key = (item) => item.id, empty = "Nothing yet.", caption } = {}) {
    this.columns = columns;
    this.key = key;
    this.rows = new Map();
    this.tbody = h("tbody");
    this.emptyNote = h("p", { class: "empty", hidden: true }, empty);
    this.table = h("table", {},
      caption ? h("caption", {}, caption) : null,
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col", class: c.numeric ? "num" : c.class ?? null }, c.label)))),
      this.tbody);
    this.element = h("div", {}, h("div", { class: "table-wrap" }, this.table), this.emptyNote);
  }

  update(items) {
    const wanted = items.map((item) => [String(this.key(item)), item]);
    const keep = new Set(wanted.map(([k]) => k));
    for (const [k, row] of this.rows) {
      if (!keep.has(k)) {
        row.tr.remove();
        this.rows.delete(k);
      }
    }
    for (const [k, item] of wanted) {
      let row = this.rows.get(k);
      if (!row) {
        const cells = this.columns.map((c) => h("td", { class: c.numeric ? "num" : c.class ?? null }, c.live ? null : c.cell(item)));
        row = { tr: h("tr", { dataset: { key: k } }, cells), cells, fresh: true };
        this.rows.set(k, row);
      }
      this.columns.forEach((c, i) => {
        if (!c.live) return;
        if (c.update && !row.fresh) c.update(row.cells[i], item);
        else row.cells[i].replaceChildren(c.cell(item));
      });
      row.fresh = false;
      row.item = item;
    }
    // Move rows only when the order changed (moving a row would take focus from its buttons).
    const current = [...this.tbody.children].map((tr) => tr.dataset.key);
    if (current.join() !== wanted.map(([k]) => k).join()) {
      this.tbody.append(...wanted.map(([k]) => this.rows.get(k).tr));
    }
    this.table.hidden = !items.length;
    this.emptyNote.hidden = items.length > 0;
  }
}
