// What the job and study forms offer: the service's solver catalog (GET /v1/solvers) and the
// OpenAPI document's request schemas.

import { get } from "./api.js";

let loading = null;

// {openapi, schemas: {JobCreate, Selection, StudyCreate, upload}, solvers: [...]}
export function loadCatalog() {
  loading ??= Promise.all([get("/openapi.json"), get("/v1/solvers")])
    .then(([openapi, solvers]) => {
      const schemas = openapi.components.schemas;
      const upload = openapi.paths["/v1/datasets"].post.requestBody.content["multipart/form-data"].schema;
      return {
        openapi,
        schemas: { JobCreate: schemas.JobCreate, Selection: schemas.Selection, StudyCreate: schemas.StudyCreate, upload },
        solvers: solvers.solvers,
      };
    })
    .catch((error) => {
      loading = null; // try again on the next page
      throw error;
    });
  return loading;
}

// The catalog's task ("classification", "regression") of a data set's task ("binary",
// "multiclass", "regression"); null before a data set is chosen.
export function catalogTask(datasetTask) {
  if (!datasetTask) return null;
  return datasetTask === "regression" ? "regression" : "classification";
}
