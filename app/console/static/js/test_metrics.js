// A model's metrics on its evaluation rows (metrics.test of a job or a model): the numbers (a
// missing one with its reason), the decision threshold, precision/recall/F1 per class, the
// confusion matrix, the ROC curve(s) and, for a binary logistic model, the calibration curve.

import { LineChart, color } from "./charts.js";
import { facts, fmtNum, h, table } from "./dom.js";

const NUMBERS = [
  ["rows", "Rows"], ["accuracy", "Accuracy"], ["balanced_accuracy", "Balanced accuracy"],
  ["log_loss", "Log-loss"], ["roc_auc", "ROC AUC"], ["average_precision", "Average precision"],
  ["precision", "Precision"], ["recall", "Recall"], ["f1", "F1"],
  ["rmse", "RMSE"], ["mae", "MAE"], ["r2", "R²"],
];

// The section, or null without test metrics; its charts are drawn once it is in the page.
export function testMetricsSection(test) {
  if (!test) return null;
  const charts = h("div", { class: "chart-pair" });
  const section = h("section", { class: "test-metrics", "aria-labelledby": "test-metrics-title" },
    h("h2", { id: "test-metrics-title" }, "Test metrics"),
    h("div", { class: "columns" },
      h("section", {}, h("h3", {}, "On the evaluation rows"), numbers(test)),
      test.per_class ? h("section", {}, h("h3", {}, "Per class"), perClass(test.per_class)) : null,
      test.confusion_matrix ? h("section", {}, h("h3", {}, "Confusion matrix"), confusionMatrix(test.confusion_matrix)) : null),
    charts);
  section.drawCharts = () => drawCharts(charts, test);
  return section;
}

function numbers(test) {
  const absent = test.absent ?? {};
  const rows = NUMBERS.filter(([key]) => key in test).map(([key, label]) => [label,
    test[key] === null ? h("span", { class: "subtle", title: absent[key] ?? "" }, `— (${absent[key] ?? "absent"})`) : fmtNum(test[key])]);
  const t = test.threshold;
  if (t) rows.push(["Decision threshold", `${fmtNum(t.value)} on the ${t.applies_to.replace("_", " ")} (${t.source}${t.metric ? `, best ${t.metric}` : ""})`]);
  if (test.unknown_label_rows) rows.push(["Rows of unseen labels (left out)", fmtNum(test.unknown_label_rows)]);
  return facts(rows);
}

function perClass(rows) {
  return table([
    { label: "Class", cell: (r) => String(r.label) },
    { label: "Precision", cell: (r) => fmtNum(r.precision), numeric: true },
    { label: "Recall", cell: (r) => fmtNum(r.recall), numeric: true },
    { label: "F1", cell: (r) => fmtNum(r.f1), numeric: true },
    { label: "Support", cell: (r) => fmtNum(r.support), numeric: true },
  ], rows);
}

// Rows: the true class; columns: the predicted one; each cell shaded by its share of its row.
function confusionMatrix({ labels, matrix }) {
  const cell = (v, row) => {
    const total = row.reduce((a, b) => a + b, 0);
    const share = total ? v / total : 0;
    return h("td", { class: "num", style: { backgroundColor: `rgba(31, 119, 180, ${(0.08 + 0.6 * share).toFixed(3)})` } }, fmtNum(v));
  };
  return h("div", { class: "table-wrap" }, h("table", { class: "confusion-matrix" },
    h("caption", {}, "rows: true class, columns: predicted class"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "true \\ predicted"), labels.map((l) => h("th", { scope: "col", class: "num" }, String(l))))),
    h("tbody", {}, matrix.map((row, i) => h("tr", {}, h("th", { scope: "row" }, String(labels[i])), row.map((v) => cell(v, row)))))));
}

function drawCharts(container, test) {
  const diagonal = (label) => ({ label, color: "#7f7f7f", dash: [5, 4], markers: false, points: [[0, 0], [1, 1]] });
  if (test.roc_curves) {
    const box = h("figure", { class: "chart-box roc-curve" }, h("figcaption", {}, "ROC curve (dashed: chance)"));
    container.append(box);
    new LineChart(box, { xLabel: "false positive rate", yLabel: "true positive rate", height: 280, series: [
      ...test.roc_curves.map((c, i) => ({ label: `${c.label} (AUC ${fmtNum(c.auc)})`, color: color(i), markers: false,
        points: c.fpr.map((x, k) => [x, c.tpr[k]]) })),
      diagonal("chance"),
    ] });
  }
  if (test.calibration) {
    const cal = test.calibration;
    const box = h("figure", { class: "chart-box calibration-curve" }, h("figcaption", {}, `Calibration (${cal.bins} bins; dashed: perfect)`));
    container.append(box);
    new LineChart(box, { xLabel: "mean predicted probability", yLabel: "fraction positive", height: 280, series: [
      { label: "model", color: color(0), markers: true, points: cal.mean_predicted.map((x, k) => [x, cal.fraction_positive[k]]) },
      diagonal("perfect"),
    ] });
  }
}
