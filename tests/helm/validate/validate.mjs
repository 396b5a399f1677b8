// Validates rendered Kubernetes manifests offline (no API server can be reached).
//
//   node validate.mjs --modules NODE_MODULES --crd MPIJOB_CRD.yaml [--commands OUT.json] FILE.yaml...
//
// - Built-in kinds: the schema of npm kubernetes-models (types, required fields, enums).
//   It does not refuse unknown fields.
// - MPIJob (kubeflow.org/v2beta1): the CRD's own openAPIV3Schema, made strict:
//   additionalProperties false on every object that lists its properties (unless it
//   preserves unknown fields), so a misspelled field is refused as a strict API server
//   would; and launcherCreationPolicy limited to the controller's two values, which the
//   CRD does not enforce (its kubebuilder enum marker is malformed, so a typo would be
//   taken as "wait"). Then the checks of the operator's validation.go: only Launcher and
//   Worker replica specs, one launcher, restartPolicy Never or OnFailure, and
//   "<name>-worker-<replicas-1>" a DNS-1035 label.
// --commands writes every container's command line (command + args) as JSON, for the
// caller to check the flags against the binaries.
//
// Prints one line per object; exit 0 when all pass, 1 otherwise, 2 on bad usage.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

function parseArgs(argv) {
  const args = { files: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--modules" || a === "--crd" || a === "--commands") {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      args[a.slice(2)] = argv[++i];
    } else if (a.startsWith("--")) {
      usage(`unknown option ${a}`);
    } else {
      args.files.push(a);
    }
  }
  if (!args.modules || !args.crd || args.files.length === 0) usage("give --modules, --crd and at least one file");
  args.modules = resolve(args.modules);
  return args;
}

function usage(why) {
  console.error(`validate.mjs: ${why}\nusage: node validate.mjs --modules DIR --crd CRD.yaml [--commands OUT] FILE...`);
  process.exit(2);
}

const args = parseArgs(process.argv.slice(2));
const require = createRequire(join(args.modules, "resolve-from-here.js"));
const YAML = require("yaml");
const Ajv = require("ajv").default;
const addFormats = require("ajv-formats").default;

// The CRD schema of `version`, strict as described above.
function mpiJobSchema(crdPath, version) {
  const crd = YAML.parse(readFileSync(crdPath, "utf8"));
  const entry = (crd?.spec?.versions ?? []).find((v) => v.name === version);
  if (!entry) throw new Error(`${crdPath}: no version ${version} in spec.versions`);
  const schema = structuredClone(entry.schema.openAPIV3Schema);
  const tighten = (node) => {
    if (node === null || typeof node !== "object") return;
    if (Array.isArray(node)) return node.forEach(tighten);
    if (node.properties && !node["x-kubernetes-preserve-unknown-fields"] && node.additionalProperties === undefined) {
      node.additionalProperties = false;
    }
    for (const value of Object.values(node)) tighten(value);
  };
  tighten(schema);
  schema.properties.spec.properties.launcherCreationPolicy.enum = ["AtStartup", "WaitForWorkersReady"];
  return schema;
}

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addFormat("int-or-string", true);
const validateMpiJob = ajv.compile(mpiJobSchema(args.crd, "v2beta1"));

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

let failures = 0;
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
      problems = validateMpiJob(doc)
        ? []
        : validateMpiJob.errors.map((e) => `${e.instancePath || "/"} ${e.message}${e.params?.additionalProperty ? `: ${e.params.additionalProperty}` : ""}${e.params?.allowedValues ? ` ${JSON.stringify(e.params.allowedValues)}` : ""}`);
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
if (args.commands) writeFileSync(args.commands, JSON.stringify(commands, null, 1));
process.exit(failures > 0 ? 1 : 0);
