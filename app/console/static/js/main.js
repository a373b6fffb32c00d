// The console's entry point: hash routing (#/jobs/3) over one static page, and the API key dialog.
// Hash routing keeps the server side to one page and its files: every view is a URL that can be
// bookmarked or shared, and nothing but "/" and /console/* is ever asked of the server.

import { ApiError, forgetKey, onKeyNeeded, storedKey } from "./api.js";
import { alertBox, h } from "./dom.js";
import * as compare from "./pages/compare.js";
import * as datasets from "./pages/datasets.js";
import * as job from "./pages/job.js";
import * as jobs from "./pages/jobs.js";
import * as models from "./pages/models.js";
import * as newJob from "./pages/new_job.js";
import * as studies from "./pages/studies.js";
import * as study from "./pages/study.js";

const ROUTES = [
  [/^\/datasets$/, datasets.list, "datasets"],
  [/^\/datasets\/(\d+)$/, datasets.detail, "datasets"],
  [/^\/jobs$/, jobs.list, "jobs"],
  [/^\/jobs\/new$/, newJob.render, "new-job"],
  [/^\/jobs\/(\d+)$/, job.render, "jobs"],
  [/^\/compare$/, compare.render, "compare"],
  [/^\/studies$/, studies.list, "studies"],
  [/^\/studies\/new$/, studies.create, "studies"],
  [/^\/studies\/(\d+)$/, study.render, "studies"],
  [/^\/models$/, models.list, "models"],
  [/^\/models\/(\d+)$/, models.detail, "models"],
];

let leaving = null; // aborts the current page's polling and requests when the user moves on

async function route({ focus = true } = {}) {
  const [path, query = ""] = location.hash.replace(/^#/, "").split("?");
  if (!path || path === "/") {
    location.replace("#/jobs");
    return;
  }
  leaving?.abort();
  leaving = new AbortController();
  const { signal } = leaving;
  const main = document.getElementById("main");
  main.replaceChildren();
  const found = ROUTES.map(([re, page, nav]) => [path.match(re), page, nav]).find(([m]) => m);
  for (const a of document.querySelectorAll("[data-nav]")) {
    if (found && a.dataset.nav === found[2]) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (!found) {
    main.append(h("h1", { tabindex: "-1" }, "Not found"), h("p", {}, `No page at ${path}.`));
  } else {
    const [match, page] = found;
    try {
      await page(main, { params: match.slice(1).map(Number), query: new URLSearchParams(query), signal });
    } catch (error) {
      if (signal.aborted) return;
      main.append(pageError(error));
    }
  }
  if (signal.aborted) return;
  // Move focus to the new page's heading, so keyboard and screen reader users start there.
  if (focus) main.querySelector("h1")?.focus({ preventScroll: false });
  showKeyState();
  document.body.dataset.page = path; // rendered: what a test (or a script) can wait for
}

function pageError(error) {
  if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
    return h("div", {},
      alertBox("This service needs an API key to show this page.", { title: "Not signed in." }),
      h("button", { type: "button", class: "primary", onclick: () => route() }, "Enter an API key"));
  }
  const title = error instanceof ApiError ? `${error.status || "Error"}:` : "Error:";
  return alertBox(error.message, { title });
}

// -- the key dialog ------------------------------------------------------------------------------

function askForKey(reason) {
  const dialog = document.getElementById("key-dialog");
  const form = document.getElementById("key-form");
  const input = document.getElementById("key-input");
  const reasonEl = document.getElementById("key-reason");
  reasonEl.hidden = !reason;
  reasonEl.textContent = reason ?? "";
  input.value = "";
  return new Promise((resolve, reject) => {
    const done = new AbortController();
    form.addEventListener("submit", () => {
      done.abort();
      resolve(input.value.trim());
    }, { signal: done.signal });
    dialog.addEventListener("close", () => {
      done.abort();
      reject(new Error("no key given"));
    }, { signal: done.signal });
    dialog.showModal();
    input.focus();
  });
}

// Who the stored key is (GET /v1/me), asked again only when the key changes.
let signedInFor;

async function showKeyState() {
  const key = storedKey();
  document.getElementById("forget-key").hidden = !key;
  if (key === signedInFor) return;
  signedInFor = key;
  const label = document.getElementById("signed-in");
  try {
    // fetch, not api.js: a missing key hides the label instead of opening the key dialog.
    const answer = await fetch("/v1/me", { headers: key ? { Authorization: `Bearer ${key}` } : {} });
    if (!answer.ok) throw new Error(`HTTP ${answer.status}`);
    const me = await answer.json();
    label.textContent = me.authenticated
      ? `Signed in as ${me.owner} (${me.role})`
      : `No API keys: ${me.owner} (${me.role}), this machine only`;
    label.hidden = false;
  } catch {
    signedInFor = undefined;  // ask again on the next page
    label.hidden = true;
  }
}

function start() {
  onKeyNeeded(askForKey);
  document.getElementById("key-cancel").addEventListener("click", () => {
    document.getElementById("key-dialog").close();
  });
  document.getElementById("forget-key").addEventListener("click", () => {
    forgetKey();
    route();
  });
  // The skip link moves focus without touching the hash (the hash is the router's).
  document.getElementById("skip-link").addEventListener("click", (e) => {
    e.preventDefault();
    document.getElementById("main").focus();
  });
  window.addEventListener("hashchange", () => route());
  route({ focus: false });
}

start();
