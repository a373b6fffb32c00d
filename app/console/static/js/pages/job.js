// One job: status, parameters, metrics, time to target, and its test score and objective against
// solver seconds or samples seen, redrawn while it runs; with sigma "auto", the chosen sigma and
// the regularisation path that chose it (the held-out score against sigma); once it has a model,
// its test metrics, confusion matrix and ROC curve, its weights by name and the warnings for a
// degenerate fit.

import { get } from "../api.js";
import { LineChart, X_AXES, chartControls, color } from "../charts.js";
import { coefficientsSection, warningsView } from "../coefficients.js";
import { alertBox, badge, facts, fill, fmtNum, fmtPercent, fmtSeconds, fmtTime, h, link, paramsTable, progressBar, setTitle, table, tagList } from "../dom.js";
import { cancelButton, isActive, scoreName, traceOf } from "../jobs_common.js";
import { every, POLL_MS } from "../poll.js";
import { testMetricsSection } from "../test_metrics.js";

export async function render(main, { params: [id], signal }) {
  let [job, trace] = await Promise.all([get(`/v1/jobs/${id}`, { signal }), traceOf(id, signal)]);
  setTitle(`Job ${id}`);
  const view = { x: "seconds", logX: true };
  // The heading and the buttons are built once (an update must not take the keyboard focus
  // away); what changes is redrawn into the slots.
  const badgeSlot = h("span");
  const cancel = cancelButton(job, update, "Cancel job");
  const modelSlot = h("span");
  const head = h("div", { class: "page-head" },
    h("h1", { tabindex: "-1" }, `Job #${job.id} `, job.name ? h("span", { class: "subtle" }, `${job.name} `) : null, badgeSlot),
    h("div", { class: "actions" }, cancel,
      job.dataset_id ? h("a", { class: "button", href: `#/compare?dataset=${job.dataset_id}&ids=${job.id}` }, "Compare with other jobs") : null,
      modelSlot));
  const status = h("div");
  const info = h("div");
  const controls = chartControls(view, () => draw());
  const scoreBox = h("figure", { class: "chart-box" });
  const objectiveBox = h("figure", { class: "chart-box" });
  // A dual solver (sdca) records its duality gap, the bound on its objective's distance to the
  // optimum that stops it: drawn on a log scale, shown only for such a run.
  const gapBox = h("figure", { class: "chart-box", hidden: true },
    h("figcaption", {}, "Duality gap (log scale): a bound on the objective's distance to the optimum"));
  const checkpoints = h("div");
  const pathBox = h("figure", { class: "chart-box" }, h("figcaption", {}, "Held-out score against sigma (band: ± one standard deviation over the splits; marker: the chosen sigma)"));
  const pathSection = h("section", { "aria-labelledby": "path-title", hidden: true },
    h("h2", { id: "path-title" }, "Sigma selection"), h("div", { class: "path-facts" }), pathBox);
  let pathChart = null;
  // Filled once, when the finished job's metrics first carry them.
  const testSlot = h("div");
  // Its model's weights by name, drawn once the job has them (they do not change after).
  const learnedSlot = h("div");
  // The curves first: every job has them; the path only a job with sigma "auto".
  main.append(head, status, info,
    h("section", { "aria-labelledby": "charts-title" },
      h("h2", { id: "charts-title" }, "Curves"), controls,
      h("div", { class: "chart-pair" }, scoreBox, objectiveBox), gapBox),
    pathSection,
    testSlot,
    learnedSlot,
    h("details", { class: "checkpoints" }, h("summary", {}, "Checkpoints (the data of the curves)"), checkpoints));
  const scoreTitle = h("figcaption");
  const objectiveTitle = h("figcaption", {}, "Training objective");
  scoreBox.append(scoreTitle);
  objectiveBox.append(objectiveTitle);
  let scoreChart = null;
  let objectiveChart = null;
  let gapChart = null;

  function draw() {
    const axis = X_AXES[view.x];
    const pts = trace.points;
    const series = (field, label) => [{ label, color: color(0), points: pts.map((p) => [p[axis.field], p[field]]) }];
    const common = { xLabel: axis.label, xFormat: axis.format, logX: view.logX, sync: `job-${id}` };
    const name = trace.score_name === "rmse" ? "test RMSE" : `test ${(trace.score_name ?? "accuracy").replaceAll("_", " ")}`;
    scoreTitle.textContent = trace.score_name ? `${name[0].toUpperCase()}${name.slice(1)} (dashed: targets)` : "No evaluation data: no test score";
    const scoreSpec = { ...common, yLabel: name, targets: job.targets, series: series("test_score", name) };
    const objectiveSpec = { ...common, yLabel: "objective", series: series("objective", "objective") };
    if (scoreChart) scoreChart.update(scoreSpec);
    else scoreChart = new LineChart(scoreBox, scoreSpec);
    if (objectiveChart) objectiveChart.update(objectiveSpec);
    else objectiveChart = new LineChart(objectiveBox, objectiveSpec);
    if (!hasGap(trace)) return;
    gapBox.hidden = false;
    const gapSpec = { ...common, yLabel: "duality gap", logY: true, series: series("duality_gap", "duality gap") };
    if (gapChart) gapChart.update(gapSpec);
    else gapChart = new LineChart(gapBox, gapSpec);
  }

  function show() {
    fill(badgeSlot, badge(job.status));
    cancel.hidden = !isActive(job) || job.cancel_requested;
    if (job.model_id && !modelSlot.firstChild) {
      modelSlot.append(h("a", { class: "button", href: `#/models/${job.model_id}` }, `Model #${job.model_id}`));
    }
    fill(status,
      h("div", { class: "job-progress" },
        progressBar(job.progress.fraction, `Progress of job ${job.id}`),
        h("span", { class: "subtle" }, progressText(job)),
        timing(job)),
      job.waiting_reason ? h("p", { class: "subtle waiting-reason" }, `Queued: ${job.waiting_reason}.`) : null,
      job.error ? alertBox(job.error, { title: "The job failed:" }) : null,
      job.cancel_requested && isActive(job) ? alertBox("Cancel requested: the worker stops at its next check.", { kind: "info" }) : null,
      warningsView(job.warnings));
    if (job.coefficients && job.model_id && !learnedSlot.firstChild) {
      fill(learnedSlot, coefficientsSection(job.coefficients, job.model_id));
    }
    info.replaceChildren(h("div", { class: "columns" },
      h("section", {}, h("h2", {}, "Run"), facts(runFacts(job))),
      h("section", {}, h("h2", {}, "Metrics"), metricsView(job, trace)),
      h("section", {}, h("h2", {}, "Time to target"), targetsTable(job)),
      h("section", {}, h("h2", {}, "Parameters"), paramsTable(job.params))));
    checkpoints.replaceChildren(checkpointTable(trace));
    showSelection();
    const test = job.metrics?.test;
    if (test && !testSlot.firstChild) {
      const section = testMetricsSection(test);
      testSlot.append(section);
      section.drawCharts();
    }
  }

  // sigma "auto": the chosen sigma and its path once the job has a model.
  function showSelection() {
    const chosen = job.selection;
    pathSection.hidden = job.params.sigma !== "auto";
    if (pathSection.hidden) return;
    fill(pathSection.querySelector(".path-facts"), chosen
      ? facts([["Chosen sigma", h("strong", { class: "chosen-sigma" }, fmtNum(chosen.sigma))],
        ["Metric", chosen.metric], ["Splits", chosen.splits], ["Path", `${chosen.path.length} sigmas, ${chosen.stop_reason}`]])
      : h("p", { class: "empty" }, "The path is shown once the job has a model."));
    if (!chosen) return;
    const points = chosen.path.filter((p) => p.mean !== null);
    const band = (sign) => points.map((p) => [p.sigma, p.mean + sign * (p.std ?? 0)]);
    const best = points.filter((p) => p.sigma === chosen.sigma).map((p) => [p.sigma, p.mean]);
    const spec = { xLabel: "sigma", yLabel: chosen.metric, logX: true, series: [
      { label: "mean - std", color: color(0), points: band(-1), edge: true },
      { label: "mean + std", color: color(0), points: band(1), edge: true },
      { label: `mean ${chosen.metric}`, color: color(0), markers: true, bandOf: [0, 1], points: points.map((p) => [p.sigma, p.mean]) },
      { label: `chosen sigma ${fmtNum(chosen.sigma)}`, color: color(1), points: best, markers: true },
    ] };
    if (pathChart) pathChart.update(spec);
    else pathChart = new LineChart(pathBox, spec);
  }

  async function update() {
    [job, trace] = await Promise.all([get(`/v1/jobs/${id}`, { signal }), traceOf(id, signal)]);
    show();
    draw();
    return isActive(job);
  }

  show();
  draw();
  if (isActive(job)) every(POLL_MS, update, signal);
}

function progressText(job) {
  const p = job.progress;
  if (!p.n_iter) return job.status;
  const counted = `${fmtNum(p.iteration ?? 0)} of ${fmtNum(p.n_iter)}`;
  // Before its own fit a job may count another phase's work (progress.phase).
  if (p.phase === "select_sigma") return `choosing sigma: fit ${counted} of the path, then the final fit`;
  if (p.phase === "choose_threshold") return `choosing the decision threshold: iteration ${counted} of a validation fit, then the final fit`;
  const text = `iteration ${counted}, ${fmtNum(p.samples_seen ?? 0)} samples seen`;
  // A fit that converged or reached its target before n_iter is complete.
  return job.status === "succeeded" && (p.iteration ?? 0) < p.n_iter ? `${text} (${job.stop_reason ?? "finished"} early)` : text;
}

// Elapsed wall time and, while it runs, the time left at the rate so far (progress.eta_s: of
// the current phase, so before the final fit it is the time left until that fit).
function timing(job) {
  const p = job.progress;
  if (p.elapsed_s === null || p.elapsed_s === undefined) return null;
  const left = job.status === "running" && p.eta_s !== null && p.eta_s !== undefined
    ? `, about ${fmtSeconds(p.eta_s)} left${p.phase && p.phase !== "fit" ? " in this phase" : ""}` : "";
  return h("span", { class: "subtle job-timing" }, `${fmtSeconds(p.elapsed_s)} elapsed${left}`);
}

function runFacts(job) {
  const evaluation = job.test_dataset_id
    ? link(`#/datasets/${job.test_dataset_id}`, `data set #${job.test_dataset_id}`)
    : job.test_fraction ? `${fmtPercent(job.test_fraction)} held out (seed ${job.split_seed})` : "none";
  return [
    ["Name", job.name ?? "—"], ["Tags", tagList(job.tags)],
    job.model_name ? ["Registers as", job.model_name] : null,
    ["Solver", job.solver], ["Task", job.task],
    job.solver_choice ? ["Chosen by auto", job.solver_choice.reason] : null,
    ["Data set", job.dataset_id ? link(`#/datasets/${job.dataset_id}`, `#${job.dataset_id}`) : "deleted"],
    job.init_model_id ? ["Started from", link(`#/models/${job.init_model_id}`, `model #${job.init_model_id}`)] : null,
    ["Evaluation", evaluation],
    ["Targets", job.targets.length ? `${job.targets.join(", ")}${job.target_metric ? ` (${job.target_metric})` : ""}` : "none"],
    job.time_budget_s ? ["Time budget", fmtSeconds(job.time_budget_s)] : null,
    job.study_id ? ["Study", h("span", {}, link(`#/studies/${job.study_id}`, `#${job.study_id}`),
      `, run ${job.study_run}, m = ${fmtNum(job.train_size)}, repeat ${job.study_repeat}`)] : null,
    ["Stop reason", job.stop_reason ?? "—"], ["Attempts", job.attempts],
    ["Created", fmtTime(job.created_at)], ["Started", fmtTime(job.started_at)], ["Finished", fmtTime(job.finished_at)],
  ];
}

function metricsView(job, trace) {
  const m = job.metrics;
  if (!m) {
    const last = trace.points.at(-1);
    if (!last) return h("p", { class: "empty" }, "No checkpoint yet.");
    return facts([["Latest checkpoint", `iteration ${fmtNum(last.iteration)}`],
      [scoreName(job), fmtNum(last.test_score)], ["Objective", fmtNum(last.objective)],
      ["Solver seconds", fmtSeconds(last.solver_seconds)]]);
  }
  const scalar = Object.entries(m).filter(([, v]) => v === null || typeof v !== "object");
  return facts(scalar.map(([k, v]) => [k.replaceAll("_", " "),
    k.endsWith("seconds") ? fmtSeconds(v) : typeof v === "number" ? fmtNum(v) : String(v ?? "—")]));
}

function targetsTable(job) {
  const ttt = job.metrics?.time_to_target ?? {};
  if (!job.targets.length) return h("p", { class: "empty" }, "No targets were set.");
  return table([
    { label: "Target", cell: (t) => String(t), numeric: true },
    { label: "Solver seconds", cell: (t) => reachText(ttt[String(t)], job), numeric: true },
  ], job.targets);
}

function reachText(seconds, job) {
  if (seconds === null || seconds === undefined) return isActive(job) || !job.metrics ? "not yet" : "not reached";
  return fmtSeconds(seconds);
}

const hasGap = (trace) => trace.points.some((p) => p.duality_gap !== null && p.duality_gap !== undefined);

function checkpointTable(trace) {
  const gap = hasGap(trace) ? [{ label: "Duality gap", cell: (p) => fmtNum(p.duality_gap), numeric: true }] : [];
  return table([
    { label: "Iteration", cell: (p) => fmtNum(p.iteration), numeric: true },
    { label: "Samples seen", cell: (p) => fmtNum(p.samples_seen), numeric: true },
    { label: "Solver seconds", cell: (p) => fmtSeconds(p.solver_seconds), numeric: true },
    { label: "Objective", cell: (p) => fmtNum(p.objective), numeric: true },
    { label: trace.score_name ?? "test score", cell: (p) => fmtNum(p.test_score), numeric: true },
    { label: "Non-zero weights", cell: (p) => fmtNum(p.nnz_weights), numeric: true },
    ...gap,
  ], trace.points, { empty: "No checkpoint yet." });
}
