// What the job and study forms offer: the service's solver catalog (GET /v1/solvers) when it has
// one, and the OpenAPI document's request schemas in every case. Without a catalog the solver is a
// text field and its parameters a JSON object, seeded from the schema's example.

import { ApiError, get } from "./api.js";

let loading = null;

// {openapi, schemas: {JobCreate, StudyCreate, upload}, solvers: [...] | null, exampleParams}
export function loadCatalog() {
  loading ??= Promise.all([get("/openapi.json"), solverCatalog()])
    .then(([openapi, solvers]) => {
      const schemas = openapi.components.schemas;
      const upload = openapi.paths["/v1/datasets"].post.requestBody.content["multipart/form-data"].schema;
      return {
        openapi,
        schemas: { JobCreate: schemas.JobCreate, StudyCreate: schemas.StudyCreate, upload },
        solvers,
        exampleParams: schemas.JobCreate.examples?.[0]?.params ?? {},
      };
    })
    .catch((error) => {
      loading = null; // try again on the next page
      throw error;
    });
  return loading;
}

async function solverCatalog() {
  try {
    const answer = await get("/v1/solvers");
    return Array.isArray(answer?.solvers) && answer.solvers.length ? answer.solvers : null;
  } catch (error) {
    if (error instanceof ApiError && (error.status === 404 || error.status === 405)) return null;
    throw error;
  }
}

// Whether a catalog solver trains on a data set of this task ("binary", "multiclass",
// "regression"); the catalog may say "classification" for the first two.
export function solverFits(solver, task) {
  const tasks = solver.tasks;
  if (!Array.isArray(tasks) || !tasks.length) return true;
  return tasks.includes(task) || (task !== "regression" && tasks.includes("classification"));
}
