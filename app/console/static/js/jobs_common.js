// What several pages say about a job: its score, whether it still runs, how to cancel it.

import { ApiError, get, post } from "./api.js";
import { reporting } from "./banner.js";
import { h } from "./dom.js";

const ACTIVE = new Set(["queued", "running"]);

export const isActive = (job) => ACTIVE.has(job.status);

export function scoreName(job) {
  return job.task === "regression" ? "test RMSE" : "test accuracy";
}

// The final test score (metrics), or for a running job the latest checkpoint's.
export function currentScore(job, trace) {
  const m = job.metrics;
  if (m && (m.test_accuracy !== undefined || m.test_rmse !== undefined)) return m.test_accuracy ?? m.test_rmse;
  const last = trace?.points?.at(-1);
  return last?.test_score ?? null;
}

export function currentSeconds(job, trace) {
  return job.metrics?.solver_seconds ?? trace?.points?.at(-1)?.solver_seconds ?? null;
}

export function traceOf(id, signal) {
  return get(`/v1/jobs/${id}/trace`, { signal });
}

// A Cancel button for a queued or running job; `after` runs once the API has answered.
export function cancelButton(job, after, label = "Cancel") {
  const button = h("button", { type: "button", class: "danger small", "aria-label": `Cancel job ${job.id}` }, label);
  button.addEventListener("click", reporting(`Job ${job.id} was not cancelled:`, async () => {
    button.disabled = true;
    try {
      await post(`/v1/jobs/${job.id}/cancel`);
    } catch (error) {
      button.disabled = false;
      // 409: it finished meanwhile; the next update shows how.
      if (!(error instanceof ApiError) || error.status !== 409) throw error;
    }
    await after();
  }));
  return button;
}
