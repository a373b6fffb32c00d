// The training data set and the evaluation data of a job or a study: a held-out fraction of the
// training set (with its seed), a separate data set, or (jobs only) none.

import { listAll } from "./api.js";
import { loadCatalog } from "./catalog.js";
import { alertBox, h, link, options, setTitle } from "./dom.js";
import { field, numberOrUndefined, schemaHint } from "./forms.js";
import { datasetLabel } from "./pages/datasets.js";

// The start of a form page that trains on a data set: its title, the catalog and the data sets;
// null (after saying so) when there is no data set yet.
export async function trainingFormPage(main, title, signal) {
  setTitle(title);
  const [catalog, all] = await Promise.all([loadCatalog(), listAll("/v1/datasets", { signal })]);
  // Rows without labels (labelled=false) are there to be predicted: no job trains on or evaluates them.
  const datasets = all.filter((d) => d.labelled !== false);
  main.append(h("h1", { tabindex: "-1" }, title));
  if (!datasets.length) {
    main.append(alertBox(h("span", {}, "There is no data set to train on yet: ", link("#/datasets", "upload one"), "."), { kind: "info" }));
    return null;
  }
  return { catalog, datasets };
}

// schema: the request's properties (JobCreate or StudyCreate); seedName: "split_seed" for a
// job, "seed" for a study; allowNone: whether "no evaluation data" is a choice.
export function dataFields(datasets, { schema, example = {}, preselect, seedName = "split_seed", allowNone = true }) {
  const dataset = h("select", {}, options(datasets.map((d) => [d.id, datasetLabel(d)]), preselect ?? datasets[0].id));
  const fraction = h("input", { type: "number", step: "any", min: "0", max: "1", inputmode: "decimal", value: example.test_fraction ?? 0.25 });
  const seed = h("input", { type: "number", step: "1", min: "0", inputmode: "numeric", value: schema[seedName].default ?? 0 });
  const testSet = h("select", {}, options(datasets.map((d) => [d.id, datasetLabel(d)])));
  const mode = (value, label, checked) => h("label", { class: "inline" },
    h("input", { type: "radio", name: "evaluation", value, checked }), ` ${label}`);
  const element = h("div", {},
    field("dataset_id", "Training data set", dataset),
    h("fieldset", { class: "field" }, h("legend", {}, "Evaluation data (for test scores and targets)"),
      mode("fraction", "hold out a fraction of the training set", true),
      mode("dataset", "a separate data set"),
      allowNone ? mode("none", "none") : null),
    h("div", { class: "form-grid" },
      field("test_fraction", "Held-out fraction", fraction, schemaHint(schema.test_fraction)),
      field(seedName, seedName === "seed" ? "Seed" : "Split seed", seed, schemaHint(schema[seedName])),
      field("test_dataset_id", "Evaluation data set", testSet)));
  const chosen = () => element.querySelector("input[name=evaluation]:checked").value;
  const sync = () => {
    fraction.disabled = chosen() !== "fraction";
    seed.disabled = seedName === "split_seed" && chosen() !== "fraction";
    testSet.disabled = chosen() !== "dataset";
  };
  element.addEventListener("change", sync);
  sync();
  return {
    element,
    dataset,
    value: () => ({
      dataset_id: Number(dataset.value),
      test_fraction: chosen() === "fraction" ? numberOrUndefined(fraction) : undefined,
      [seedName]: seed.disabled ? undefined : numberOrUndefined(seed),
      test_dataset_id: chosen() === "dataset" ? Number(testSet.value) : undefined,
    }),
  };
}
