// A destructive action asked for twice, inline (no window.confirm): the question, the action's
// button, and a way out; an API refusal (such as a 409) is shown in place.

import { ApiError } from "./api.js";
import { alertBox, h } from "./dom.js";

export function confirmInline(box, { question, confirmLabel, run }) {
  const message = h("div", { role: "status" });
  const yes = h("button", { type: "button", class: "danger" }, confirmLabel);
  yes.addEventListener("click", async () => {
    yes.disabled = true;
    try {
      await run();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      message.replaceChildren(alertBox(error.message, { title: error.status === 409 ? "Refused:" : `${error.status}:` }));
      yes.disabled = false;
    }
  });
  box.replaceChildren(h("div", { class: "confirm panel" }, h("p", {}, question),
    h("div", { class: "actions" }, yes, h("button", { type: "button", onclick: () => box.replaceChildren() }, "Keep it")),
    message));
  yes.focus();
}
