// Validates rendered Kubernetes manifests offline (no API server can be reached).
//
//   node validate.mjs --modules NODE_MODULES [--crd MPIJOB_CRD.yaml] [--commands OUT.json]
//                     [--schema MPIJOB_SCHEMA.yaml] FILE.yaml...
//
// - Built-in kinds: the schema of npm kubernetes-models (types, required fields, enums).
//   It does not refuse unknown fields.
// - MPIJob (kubeflow.org/v2beta1), always: the in-repo schema
//   (mpijob_v2beta1_schema.yaml: the fields the chart renders, unknown fields refused).
//   Then the checks of the operator's validation.go: only Launcher and Worker replica
//   specs, one launcher, restartPolicy Never or OnFailure, and "<name>-worker-<replicas-1>"
//   a DNS-1035 label.
// - MPIJob, when the operator's CRD is given (--crd, else $GANTRY_MPIJOB_CRD when set):
//   also the CRD's own openAPIV3Schema made strict (mpijob_schemas.mjs), and the in-repo
//   schema is compared with the CRD's: a field, type, required list or enum of ours that
//   the CRD does not have is a failure.
// Each problem says which schema found it ("in-repo schema:", "operator CRD:").
// --schema replaces the in-repo schema (the chart test checks with it that a schema which
// disagrees with the CRD is reported).
// --commands writes every container's command line (command + args) as JSON, for the
// caller to check the flags against the binaries.
//
// Prints one line per object; exit 0 when all pass, 1 otherwise, 2 on bad usage (a CRD
// path that is not a readable MPIJob CRD among them).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { IN_REPO_SCHEMA, crdSchema, disagreements, inRepoSchema } from "./mpijob_schemas.mjs";

function parseArgs(argv) {
  const args = { files: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--modules" || a === "--crd" || a === "--commands" || a === "--schema") {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      args[a.slice(2)] = argv[++i];
    } else if (a.startsWith("--")) {
      usage(`unknown option ${a}`);
    } else {
      args.files.push(a);
    }
  }
  if (!args.modules || args.files.length === 0) usage("give --modules and at least one file");
  args.modules = resolve(args.modules);
  args.schema ??= IN_REPO_SCHEMA;
  if (!existsSync(args.schema)) usage(`${args.schema}: no such MPIJob schema`);
  args.crd ??= process.env.GANTRY_MPIJOB_CRD || undefined;
  if (args.crd !== undefined && !existsSync(args.crd)) {
    usage(`the MPIJob CRD ${args.crd} does not exist: give the path of the operator's kubeflow.org_mpijobs.yaml, or unset GANTRY_MPIJOB_CRD to check against the in-repo schema alone`);
  }
  return args;
}

function usage(why) {
  console.error(`validate.mjs: ${why}\nusage: node validate.mjs --modules DIR [--crd CRD.yaml] [--commands OUT] [--schema FILE] FILE...`);
  process.exit(2);
}

const args = parseArgs(process.argv.slice(2));
const require = createRequire(join(args.modules, "resolve-from-here.js"));
const YAML = require("yaml");
const Ajv = require("ajv").default;
const addFormats = require("ajv-formats").default;

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addFormat("int-or-string", true);

// One validator per schema, each naming itself in its problems.
function mpiJobValidators() {
  const ours = inRepoSchema(YAML, args.schema);
  const validators = [{ name: "in-repo schema", validate: ajv.compile(ours) }];
  if (args.crd === undefined) return validators;
  let crd;
  try {
    crd = crdSchema(YAML, args.crd);
  } catch (e) {
    usage(e.message);
  }
  const drift = disagreements(ours, crd.original);
  if (drift.length > 0) {
    console.log(`FAIL ${args.schema} disagrees with the operator's CRD ${args.crd}:\n  ${drift.join("\n  ")}`);
    failures++;
  } else {
    console.log(`ok   ${args.schema} agrees with the operator's CRD ${args.crd}`);
  }
  validators.push({ name: "operator CRD", validate: ajv.compile(crd.strict) });
  return validators;
}

// Set when the in-repo schema refused a field it does not list: said once at the end.
let unknownToInRepoSchema = false;

function schemaProblems(validator, doc) {
  if (validator.validate(doc)) return [];
  return validator.validate.errors.map((e) => {
    const unknown = e.params?.additionalProperty ? `: ${e.params.additionalProperty}` : "";
    if (unknown && validator.name === "in-repo schema") unknownToInRepoSchema = true;
    const allowed = e.params?.allowedValues ? ` ${JSON.stringify(e.params.allowedValues)}` : "";
    return `${validator.name}: ${e.instancePath || "/"} ${e.message}${unknown}${allowed}`;
  });
}

let failures = 0;
const validators = mpiJobValidators();

const DNS1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

// The rules of mpi-operator's pkg/apis/kubeflow/validation/validation.go.
function operatorRules(job) {
  const problems = [];
  const name = job.metadata?.name ?? "";
  const specs = job.spec?.mpiReplicaSpecs ?? {};
  for (const role of Object.keys(specs)) {
    if (role !== "Launcher" && role !== "Worker") problems.push(`spec.mpiReplicaSpecs.${role}: only Launcher and Worker`);
  }
  if (!specs.Launcher) problems.push("spec.mpiReplicaSpecs.Launcher: missing");
  else if ((specs.Launcher.replicas ?? 1) !== 1) problems.push("spec.mpiReplicaSpecs.Launcher.replicas: must be 1");
  for (const [role, spec] of Object.entries(specs)) {
    const policy = spec.restartPolicy;
    if (policy !== undefined && policy !== "Never" && policy !== "OnFailure") {
      problems.push(`spec.mpiReplicaSpecs.${role}.restartPolicy ${policy}: must be Never or OnFailure`);
    }
  }
  const workers = specs.Worker?.replicas ?? 0;
  const lastWorker = `${name}-worker-${Math.max(workers - 1, 0)}`;
  if (lastWorker.length > 63 || !DNS1035.test(lastWorker)) {
    problems.push(`metadata.name: pod name ${lastWorker} is not a DNS-1035 label (at most 63 characters)`);
  }
  return problems;
}

// Built-in kinds: kubernetes-models/<group path>/<Kind>.js, imported by file path.
async function builtInProblems(doc) {
  const path = doc.apiVersion.includes("/") ? doc.apiVersion : `v1`;
  const file = join(args.modules, "kubernetes-models", path, `${doc.kind}.js`);
  let Model;
  try {
    Model = (await import(pathToFileURL(file).href))[doc.kind];
  } catch (e) {
    return [`no schema for ${doc.apiVersion} ${doc.kind} in kubernetes-models (${e.code ?? e.message})`];
  }
  try {
    new Model(doc).validate();
    return [];
  } catch (e) {
    return [e.message];
  }
}

function containers(doc) {
  const found = [];
  const walk = (node, where) => {
    if (node === null || typeof node !== "object") return;
    if (Array.isArray(node.containers)) {
      for (const c of node.containers) found.push({ where: `${where}/${c.name}`, argv: [...(c.command ?? []), ...(c.args ?? [])] });
    }
    for (const [key, value] of Object.entries(node)) if (key !== "containers") walk(value, `${where}`);
  };
  walk(doc.spec, `${doc.kind}/${doc.metadata?.name}`);
  return found;
}

const commands = [];
for (const file of args.files) {
  const docs = YAML.parseAllDocuments(readFileSync(file, "utf8"));
  for (const parsed of docs) {
    if (parsed.errors.length > 0) {
      console.log(`FAIL ${file}: not YAML: ${parsed.errors[0].message}`);
      failures++;
      continue;
    }
    const doc = parsed.toJS();
    if (doc === null || doc === undefined) continue;
    const label = `${file}: ${doc.apiVersion} ${doc.kind} ${doc.metadata?.name}`;
    let problems;
    if (doc.apiVersion === "kubeflow.org/v2beta1" && doc.kind === "MPIJob") {
      problems = validators.flatMap((validator) => schemaProblems(validator, doc));
      problems.push(...operatorRules(doc));
    } else {
      problems = await builtInProblems(doc);
    }
    if (problems.length > 0) {
      failures++;
      console.log(`FAIL ${label}\n  ${problems.join("\n  ")}`);
    } else {
      console.log(`ok   ${label}`);
    }
    commands.push(...containers(doc));
  }
}
if (unknownToInRepoSchema) {
  console.log(`note: ${args.schema} lists only the fields the chart renders; a field the operator (or Kubernetes, in a pod template) does have is added there with its facts`);
}
if (args.commands) writeFileSync(args.commands, JSON.stringify(commands, null, 1));
process.exit(failures > 0 ? 1 : 0);
