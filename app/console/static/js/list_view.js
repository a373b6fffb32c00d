// A list the API searches, filters, sorts and pages (GET /v1/...?q=&tag=&sort=&limit=&cursor=):
// the browser holds one page, so a list of thousands of rows costs what a page costs. The view's
// state (search, tag, filters, sort) is in the page's hash query, so a filtered list can be
// bookmarked and shared.

import { get } from "./api.js";
import { h, labelled, options } from "./dom.js";

const DEBOUNCE_MS = 300;

export class ServerList {
  // path: the API list; route: the console's hash path ("#/models"); query: the route's
  // URLSearchParams; selects: [{name, label, choices: [[value, text]], param}] (param: the API's
  // query parameter, default name); render(items): draws a page; noun: what a row is ("model").
  constructor({ path, route, query, selects = [], pageSize = 50, signal, render, noun }) {
    Object.assign(this, { path, route, selects, pageSize, signal, render, noun });
    this.state = { q: query.get("q") ?? "", tag: query.get("tag") ?? "", sort: query.get("sort") ?? "" };
    for (const s of selects) this.state[s.name] = query.get(s.name) ?? "";
    this.cursors = [null]; // the cursor of each page seen, for "Previous"
    this.next = null;
    this.sortButtons = [];

    const search = h("input", { type: "search", value: this.state.q, placeholder: `name contains…`, "data-filter": "q" });
    const tag = h("input", { type: "text", value: this.state.tag, placeholder: "a tag", "data-filter": "tag" });
    // Typing in either box asks once for both, after a pause.
    let timer = null;
    const typed = () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.change({ q: search.value.trim(), tag: tag.value.trim() }), DEBOUNCE_MS);
    };
    search.addEventListener("input", typed);
    tag.addEventListener("input", typed);
    const selectControls = selects.map((s) => {
      const select = h("select", { "data-filter": s.name }, options([["", `any ${s.label.toLowerCase()}`], ...s.choices], this.state[s.name]));
      select.addEventListener("change", () => this.change({ [s.name]: select.value }));
      return labelled(s.label, select);
    });
    this.summary = h("p", { class: "subtle list-summary", role: "status" });
    this.previous = h("button", { type: "button", disabled: true, onclick: () => this.turn(-1) }, "Previous page");
    this.nextButton = h("button", { type: "button", disabled: true, onclick: () => this.turn(1) }, "Next page");
    this.controls = h("div", { class: "filters", role: "group", "aria-label": "Search and filters" },
      labelled("Search", search), labelled("Tag", tag), selectControls);
    this.pager = h("nav", { class: "pager actions", "aria-label": "Pages" }, this.previous, this.nextButton);
  }

  // A column header that sorts by `field` (the API's sort name); a second click reverses it.
  sortHeader(label, field) {
    const button = h("button", { type: "button", class: "link-button sort", "data-sort": field }, label);
    button.addEventListener("click", () => {
      const ascending = this.state.sort === field;
      this.change({ sort: ascending ? `-${field}` : field });
    });
    this.sortButtons.push(button);
    return button;
  }

  change(values) {
    Object.assign(this.state, values);
    this.cursors = [null];
    history.replaceState(null, "", this.hash());
    return this.load();
  }

  turn(step) {
    if (step > 0 && this.next) this.cursors.push(this.next);
    if (step < 0 && this.cursors.length > 1) this.cursors.pop();
    return this.load();
  }

  hash() {
    const q = new URLSearchParams(Object.entries(this.state).filter(([, v]) => v));
    return `${this.route}${q.size ? `?${q}` : ""}`;
  }

  url() {
    const q = new URLSearchParams({ limit: String(this.pageSize) });
    // A select may name its API parameter apart from its place in the page's address.
    const param = new Map(this.selects.map((s) => [s.name, s.param ?? s.name]));
    for (const [name, value] of Object.entries(this.state)) if (value) q.set(param.get(name) ?? name, value);
    const cursor = this.cursors.at(-1);
    if (cursor) q.set("cursor", cursor);
    return `${this.path}?${q}`;
  }

  // Fetch the current page (again, when polling) and draw it.
  async load() {
    const page = await get(this.url(), { signal: this.signal });
    this.next = page.next_cursor;
    await this.render(page.items);
    this.previous.disabled = this.cursors.length <= 1;
    this.nextButton.disabled = !this.next;
    const n = page.items.length;
    const first = (this.cursors.length - 1) * this.pageSize;
    // An empty page says so in the table's own place.
    this.summary.textContent = n ? `${this.noun}s ${first + 1}–${first + n}${this.next ? ", more on the next page" : ""}` : "";
    for (const button of this.sortButtons) {
      const field = button.dataset.sort;
      const order = this.state.sort === field ? "ascending" : this.state.sort === `-${field}` ? "descending" : "none";
      button.closest("th")?.setAttribute("aria-sort", order);
      button.dataset.order = order;
    }
    return page;
  }
}
