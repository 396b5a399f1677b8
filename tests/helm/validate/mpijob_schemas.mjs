// The two schemas a rendered MPIJob (kubeflow.org/v2beta1) is checked against:
// - inRepoSchema(): mpijob_v2beta1_schema.yaml beside this file (or another file, for the
//   tests of this comparison), always;
// - crdSchema(path): the MPI Operator's own CRD, when the caller has one, made strict:
//   additionalProperties false on every object that lists its properties (unless it
//   preserves unknown fields), so a misspelled field is refused as a strict API server
//   would; and launcherCreationPolicy limited to the controller's two values, which the
//   CRD does not enforce (its kubebuilder enum marker is malformed, so a typo would be
//   taken as "wait").
// disagreements(ours, crd) lists where the in-repo schema says something the CRD does not:
// a field the CRD lacks, another type, an optional field the CRD requires, or a value
// outside the CRD's enum. The in-repo schema may be stricter (more required fields,
// enums where the CRD has none, bounds); it may not allow what the CRD refuses.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const IN_REPO_SCHEMA = join(dirname(fileURLToPath(import.meta.url)), "mpijob_v2beta1_schema.yaml");
const VERSION = "v2beta1";

export function inRepoSchema(YAML, path = IN_REPO_SCHEMA) {
  return YAML.parse(readFileSync(path, "utf8"));
}

// The CRD's openAPIV3Schema of v2beta1, as it is (for disagreements) and made strict.
export function crdSchema(YAML, crdPath) {
  const crd = YAML.parse(readFileSync(crdPath, "utf8"));
  if (crd?.kind !== "CustomResourceDefinition" || crd?.spec?.group !== "kubeflow.org" || crd?.spec?.names?.kind !== "MPIJob") {
    throw new Error(`${crdPath}: not the CustomResourceDefinition of kubeflow.org MPIJob`);
  }
  const entry = (crd.spec.versions ?? []).find((v) => v.name === VERSION);
  if (!entry?.schema?.openAPIV3Schema) throw new Error(`${crdPath}: no version ${VERSION} with a schema in spec.versions`);
  const original = entry.schema.openAPIV3Schema;
  const strict = structuredClone(original);
  tighten(strict);
  strict.properties.spec.properties.launcherCreationPolicy.enum = ["AtStartup", "WaitForWorkersReady"];
  return { original, strict };
}

function tighten(node) {
  if (node === null || typeof node !== "object") return;
  if (Array.isArray(node)) return node.forEach(tighten);
  if (node.properties && !node["x-kubernetes-preserve-unknown-fields"] && node.additionalProperties === undefined) {
    node.additionalProperties = false;
  }
  for (const value of Object.values(node)) tighten(value);
}

// Follows a local "#/definitions/name" reference of the in-repo schema.
function resolve(root, node) {
  while (node?.$ref) {
    const name = node.$ref.replace(/^#\/definitions\//, "");
    if (!root.definitions?.[name]) throw new Error(`the in-repo schema: ${node.$ref} is not defined`);
    node = root.definitions[name];
  }
  return node;
}

// What one node of ours says that the CRD's node at the same path does not.
function nodeProblems(ours, crd, path) {
  const problems = [];
  if (ours.type !== undefined && crd.type !== undefined && ours.type !== crd.type) {
    problems.push(`${path}: type ${ours.type}, the CRD's is ${crd.type}`);
  }
  const intOrString = (n) => n["x-kubernetes-int-or-string"] === true;
  if (intOrString(ours) !== intOrString(crd)) {
    problems.push(`${path}: ${intOrString(crd) ? "the CRD's is" : "the CRD's is not"} int-or-string`);
  }
  const ourRequired = new Set(ours.required ?? []);
  for (const name of crd.required ?? []) {
    if (!ourRequired.has(name)) problems.push(`${path}: the CRD requires ${name}`);
  }
  if (Array.isArray(crd.enum)) {
    const outside = (ours.enum ?? ["(any value)"]).filter((v) => !crd.enum.includes(v));
    if (outside.length > 0) problems.push(`${path}: allows ${outside.join(", ")}; the CRD allows only ${crd.enum.join(", ")}`);
  }
  return problems;
}

// The CRD's schema of field `name` of `crd`: a listed property, else its map values.
// undefined when the CRD has no such field.
function crdChild(crd, name) {
  if (crd.properties?.[name]) return crd.properties[name];
  if (crd.additionalProperties && typeof crd.additionalProperties === "object") return crd.additionalProperties;
  return undefined;
}

export function disagreements(ours, crd) {
  const problems = [];
  const walk = (node, crdNode, path) => {
    node = resolve(ours, node);
    problems.push(...nodeProblems(node, crdNode, path || "/"));
    // An object the CRD leaves open (the MPIJob's own metadata, which the API server
    // checks as ObjectMeta): nothing more to compare.
    if (crdNode.type === "object" && !crdNode.properties && crdNode.additionalProperties === undefined) return;
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      const crdNext = crdChild(crdNode, name);
      if (crdNext === undefined) problems.push(`${path}/${name}: the CRD has no such field`);
      else walk(child, crdNext, `${path}/${name}`);
    }
    if (node.additionalProperties && typeof node.additionalProperties === "object") {
      if (typeof crdNode.additionalProperties !== "object") problems.push(`${path}: a map here, not in the CRD`);
      else walk(node.additionalProperties, crdNode.additionalProperties, `${path}/*`);
    }
    if (node.items) {
      if (!crdNode.items) problems.push(`${path}: a list here, not in the CRD`);
      else walk(node.items, crdNode.items, `${path}[]`);
    }
  };
  walk(ours, crd, "");
  return problems;
}
