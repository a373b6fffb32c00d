// One banner under the header for what fails outside a form: a poll the service did not answer,
// a button whose request was refused. Cleared by the next success.

import { h } from "./dom.js";

export function showBanner(title, error) {
  const banner = document.getElementById("connection");
  banner.replaceChildren(h("strong", {}, title, " "),
    error.status ? error.message : "the service does not answer.");
  banner.hidden = false;
}

export function clearBanner() {
  document.getElementById("connection").hidden = true;
}

// An onclick handler for an async action: a refusal goes to the banner instead of the console.
export function reporting(title, action) {
  return async (event) => {
    try {
      await action(event);
      clearBanner();
    } catch (error) {
      showBanner(title, error);
    }
  };
}
