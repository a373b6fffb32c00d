// The one way the console talks to the service: the public HTTP API, with the user's key as a
// bearer token. The key lives in sessionStorage: this tab only, gone when the tab closes, never in
// a URL or in localStorage.

const KEY_SLOT = "pgs-console.api-key";

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem ?? {};
  }

  // problem+json "errors": [{loc: ["body", "params", "p"], msg, ...}]
  get fieldErrors() {
    return Array.isArray(this.problem.errors) ? this.problem.errors : [];
  }
}

let askForKey = null;
let pendingAsk = null;

// main.js installs the dialog that asks for a key; it resolves with the key or rejects.
export function onKeyNeeded(ask) {
  askForKey = ask;
}

export function storedKey() {
  return sessionStorage.getItem(KEY_SLOT);
}

export function forgetKey() {
  sessionStorage.removeItem(KEY_SLOT);
}

async function obtainKey(status, problem) {
  if (!askForKey) throw new ApiError(status, problem);
  // Requests that fail together share one dialog.
  pendingAsk ??= askForKey(status === 403 ? "The service refused that key; enter another." : null)
    .then((key) => sessionStorage.setItem(KEY_SLOT, key))
    .catch(() => { throw new ApiError(status, problem); })
    .finally(() => { pendingAsk = null; });
  return pendingAsk;
}

function authorization() {
  const key = storedKey();
  return key ? { Authorization: `Bearer ${key}` } : {};
}

async function problemOf(response) {
  try {
    return await response.json();
  } catch {
    return { status: response.status, detail: `${response.status} ${response.statusText}` };
  }
}

// A GET that failed before any answer (a network change, a restarting proxy) is tried again
// this many times, a moment apart; other methods are not repeated behind the user's back.
const GET_RETRIES = 2;

function fetchOnce(path, init) {
  return fetch(path, init).catch(async (error) => {
    if (init.method !== "GET" || init.signal?.aborted) throw error;
    for (let attempt = 1; ; attempt += 1) {
      await new Promise((resolve) => { setTimeout(resolve, 300 * attempt); });
      try {
        return await fetch(path, init);
      } catch (again) {
        if (attempt >= GET_RETRIES || init.signal?.aborted) throw again;
      }
    }
  });
}

// fetch() for the API: JSON in (json=) or any body (body=), JSON, a Blob or nothing out.
export async function request(path, { method = "GET", json, body, headers = {}, as = "json", signal } = {}) {
  for (;;) {
    const sentKey = storedKey();
    const init = { method, signal, headers: { Accept: "application/json", ...headers, ...authorization() } };
    if (json !== undefined) {
      init.body = JSON.stringify(json);
      init.headers["Content-Type"] = "application/json";
    } else if (body !== undefined) {
      init.body = body;
    }
    const response = await fetchOnce(path, init);
    if (response.status === 401 || response.status === 403) {
      // Refused a key (or none) that another request's dialog has replaced since it was sent:
      // try the new one before asking again, or the dialog would lose the new key's answer.
      if (storedKey() === sentKey) await obtainKey(response.status, await problemOf(response));
      continue;
    }
    if (!response.ok) throw new ApiError(response.status, await problemOf(response));
    if (response.status === 204) return null;
    return as === "blob" ? response.blob() : response.json();
  }
}

export const get = (path, opts) => request(path, opts);
export const post = (path, json, opts) => request(path, { ...opts, method: "POST", json });
export const del = (path, opts) => request(path, { ...opts, method: "DELETE" });

// Every item of a paginated listing (newest first), up to `max` items.
export async function listAll(path, { max = 1000, signal } = {}) {
  const items = [];
  let cursor = null;
  const sep = path.includes("?") ? "&" : "?";
  do {
    const page = await get(`${path}${sep}limit=${Math.min(500, max)}${cursor ? `&cursor=${cursor}` : ""}`, { signal });
    items.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor && items.length < max);
  return items.slice(0, max);
}

// A multipart upload with progress: fetch() cannot report upload progress, XMLHttpRequest can.
export function upload(path, formData, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", path);
    xhr.setRequestHeader("Accept", "application/json");
    const key = storedKey();
    if (key) xhr.setRequestHeader("Authorization", `Bearer ${key}`);
    xhr.upload.addEventListener("progress", (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    });
    xhr.addEventListener("load", () => {
      let payload;
      try {
        payload = JSON.parse(xhr.responseText);
      } catch {
        payload = { detail: `${xhr.status} ${xhr.statusText}` };
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve(payload);
      } else if (xhr.status === 401 || xhr.status === 403) {
        obtainKey(xhr.status, payload).then(() => upload(path, formData, onProgress)).then(resolve, reject);
      } else {
        reject(new ApiError(xhr.status, payload));
      }
    });
    xhr.addEventListener("error", () => reject(new ApiError(0, { detail: "the connection to the service failed" })));
    xhr.send(formData);
  });
}

// A download of an API resource: fetched with the key, then saved through a blob: link.
export async function download(path, filename) {
  const blob = await request(path, { as: "blob", headers: { Accept: "*/*" } });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

// A random Idempotency-Key; crypto.randomUUID needs a secure context, getRandomValues does not.
export function newIdempotencyKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `console-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}
