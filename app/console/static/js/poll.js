// Live updates by polling. Why not server-sent events: EventSource cannot send an Authorization
// header (the key would have to go in the URL), the API has no event stream and the console adds
// no route of its own, and a plain GET works through any proxy and against any of several API
// processes. Jobs write progress every PGS_PROGRESS_INTERVAL_S (0.25 s), so a one-second poll shows
// every change a person can follow.

import { clearBanner, showBanner } from "./banner.js";

export const POLL_MS = 1000;

// Call `step` every `ms` (the page has loaded its first data itself) until it returns false or `signal` aborts (the user left
// the page). A hidden tab is not polled; errors are shown in the connection banner and retried.
export function every(ms, step, signal) {
  let timer = null;
  const tick = async () => {
    timer = null;
    if (signal.aborted) return;
    let again = true;
    if (!document.hidden) {
      try {
        again = (await step()) !== false;
        clearBanner();
      } catch (error) {
        if (signal.aborted || error.name === "AbortError") return;
        showBanner("Live updates paused (retrying):", error);
      }
    }
    if (again && !signal.aborted) timer = setTimeout(tick, ms);
  };
  signal.addEventListener("abort", () => timer && clearTimeout(timer));
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden && timer) { clearTimeout(timer); tick(); }
  }, { signal });
  timer = setTimeout(tick, ms);
}
