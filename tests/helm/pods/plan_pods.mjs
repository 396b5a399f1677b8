// Turns a rendered gantry chart (`helm template` output) into the "pods" that
// tests/helm/pods_test.sh plays in network namespaces, doing what the API server, the
// MPI Operator and the kubelet would do with the objects, and changing only what cannot
// be the same off-cluster. Every such change is printed.
//
//   node plan_pods.mjs --modules NODE_MODULES --rendered FILE.yaml --namespace NS \
//        --work DIR --bin-dir DIR --subnet A.B.C --node NODE
//
// Played objects: the coordinator StatefulSet (one pod, "<name>-0"), its Service (a name
// in the cluster's DNS that leads to the pod: there is no kube-proxy, so the Service
// port must equal the container port), the token Secret, the PVCs (folders), and
// every MPIJob: "<job>-worker-<i>" pods and a "<job>-launcher" pod, with the operator's
// hostfile (/etc/mpi), its launcher environment, its hostnames and subdomain; the `helm
// test` Job as one more pod.
//
// Writes under --work:
//   dns-records, resolv.conf  the cluster's DNS names that do not depend on readiness (for
//                          cluster_dns.mjs), the pods' resolv.conf
//   passwd, group          this machine's, plus the images' user when its uid is missing
//   volumes/...            Secret, ConfigMap and operator files; PVC and emptyDir folders
//   pods/<pod>/argv, env   the container's command line and environment (NUL-separated)
//   pods/<pod>/mounts      "SOURCE<TAB>TARGET<TAB>ro|rw" for the pod's mount namespace
//   pods/<pod>/hosts       the pod's /etc/hosts, as the kubelet writes it
//   pods/<pod>/dns-record  the pod's DNS record, published while it is Ready
//   pods/<pod>/probes      "startup|liveness|readiness TIMEOUT_S BUDGET_S grpc|tcp PORT [SERVICE]"
//                          (BUDGET_S: periodSeconds x failureThreshold)
//   pods/<pod>/pod.sh      shell variables: ROLE, IP, HOSTNAME, RUN_AS_UID, ...
//   plan.sh                shell variables naming the pods and the addresses
// Exit 0 planned, 1 the chart renders something the play cannot run (said why), 2 usage.
import { chownSync, chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

function usage(why) {
  console.error(`plan_pods.mjs: ${why}\nusage: node plan_pods.mjs --modules DIR --rendered FILE --namespace NS ` +
    `--work DIR --bin-dir DIR --subnet A.B.C --node NODE`);
  process.exit(2);
}

function parseArgs(argv) {
  const names = ["modules", "rendered", "namespace", "work", "bin-dir", "subnet", "node"];
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i].replace(/^--/, "");
    if (!names.includes(name) || i + 1 >= argv.length) usage(`bad argument ${argv[i]}`);
    args[name] = argv[i + 1];
  }
  for (const name of names) if (!args[name]) usage(`--${name} is missing`);
  if (!/^\d+\.\d+\.\d+$/.test(args.subnet)) usage(`--subnet ${args.subnet}: three numbers, e.g. 10.77.3`);
  return args;
}

class PlayError extends Error {}
const refuse = (message) => { throw new PlayError(message); };
process.on("uncaughtException", (e) => {
  console.error(e instanceof PlayError ? `plan_pods.mjs: ${e.message}` : e);
  process.exit(1);
});

const args = parseArgs(process.argv.slice(2));
const require = createRequire(join(resolve(args.modules), "resolve-from-here.js"));
const YAML = require("yaml");
const work = resolve(args.work);
const binDir = resolve(args["bin-dir"]);
const ns = args.namespace;
// The images put gantry's programs in /usr/local/bin; here they are the build's.
const podPath = `${binDir}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;
// The images' WORKDIR and HOME (/home/gantry): one path in every pod, each pod's own
// folder bind-mounted there.
const homePath = join(work, "home");
mkdirSync(homePath, { recursive: true });
const substitutions = [];
const note = (what) => substitutions.push(what);

function loadObjects(file) {
  // YAML 1.1, as Kubernetes reads manifests: "defaultMode: 0440" is octal there.
  const docs = YAML.parseAllDocuments(readFileSync(file, "utf8"), { version: "1.1" });
  const objects = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) refuse(`${file}: ${doc.errors[0].message}`);
    const o = doc.toJS();
    if (o && o.kind) objects.push(o);
  }
  return objects;
}

const objects = loadObjects(args.rendered);
const ofKind = (kind) => objects.filter((o) => o.kind === kind);
const named = (kind, name) => ofKind(kind).find((o) => o.metadata.name === name);

function writeFile(path, text, mode) {
  mkdirSync(resolve(path, ".."), { recursive: true });
  writeFileSync(path, text);
  if (mode !== undefined) chmodSync(path, mode);
}

// --- Volumes: what each volume of a pod is on this machine -------------------------
function secretVolume(secretName, defaultMode, gid) {
  const secret = named("Secret", secretName) ??
    refuse(`Secret ${secretName} is not rendered (auth.existingSecret?): the play needs the token it holds`);
  const dir = join(work, "volumes", `secret-${secretName}`);
  mkdirSync(dir, { recursive: true });
  for (const [key, value] of Object.entries(secret.data ?? {})) {
    const path = join(dir, key);
    writeFile(path, Buffer.from(value, "base64"), defaultMode ?? 0o644);
    chownSync(path, 0, gid);  // the kubelet gives the files to the fsGroup
  }
  return dir;
}

// A ConfigMap's keys as files: the rendered ConfigMap's data, or `files` ({key: {text,
// mode}}) for one a controller makes (the MPI Operator's <job>-config).
function configMapVolume(mapName, files) {
  const data = files ?? (named("ConfigMap", mapName) ?? refuse(`ConfigMap ${mapName} is not rendered`)).data;
  const dir = join(work, "volumes", `configmap-${mapName}`);
  for (const [key, value] of Object.entries(data ?? {})) writeFile(join(dir, key), value.text ?? value, value.mode ?? 0o644);
  return dir;
}

function ownedFolder(path, uid, gid) {
  mkdirSync(path, { recursive: true });
  chownSync(path, uid, gid);
  chmodSync(path, 0o2775);
  return path;
}

// The folder that stands for `volume` in pod `pod`.
function volumeSource(pod, volume, claimTemplates) {
  const { uid, fsGroup } = pod.user;
  if (volume.persistentVolumeClaim) {
    return ownedFolder(join(work, "volumes", `pvc-${volume.persistentVolumeClaim.claimName}`), uid, fsGroup);
  }
  if (claimTemplates.has(volume.name)) {
    return ownedFolder(join(work, "volumes", `pvc-${volume.name}-${pod.name}`), uid, fsGroup);
  }
  if (volume.emptyDir) return ownedFolder(join(work, "pods", pod.name, `emptydir-${volume.name}`), uid, fsGroup);
  if (volume.secret) return secretVolume(volume.secret.secretName, volume.secret.defaultMode, fsGroup);
  if (volume.configMap) return configMapVolume(volume.configMap.name, volume.files);
  return refuse(`pod ${pod.name}: volume ${volume.name} has a source the play does not know: ${JSON.stringify(volume)}`);
}

// Mounts of the container: a path that exists on this machine is bind-mounted over in the
// pod's mount namespace; one that does not (/runs, /etc/gantry/token, ...) cannot be
// created on this machine's root, so the folder is used at its own path and the
// container's arguments and environment are rewritten to it.
function planMounts(pod, container, volumes, claimTemplates) {
  const mounts = [];
  const rewrites = [];
  for (const m of container.volumeMounts ?? []) {
    if (m.subPath) refuse(`pod ${pod.name}: mount ${m.mountPath} uses subPath, which the play does not do`);
    const volume = volumes.find((v) => v.name === m.name) ??
      (claimTemplates.has(m.name) ? { name: m.name } : refuse(`pod ${pod.name}: no volume ${m.name}`));
    const source = volumeSource(pod, volume, claimTemplates);
    // The kubelet mounts Secret and ConfigMap volumes read-only whatever the mount says.
    const mode = m.readOnly || volume.secret || volume.configMap ? "ro" : "rw";
    if (existsSync(m.mountPath)) {
      mounts.push([source, m.mountPath, mode]);
      note(`${pod.name}: ${m.mountPath} (${m.name}) is ${source}, bind-mounted there (${mode})`);
    } else {
      mounts.push([source, source, mode]);
      rewrites.push([m.mountPath, source]);
      note(`${pod.name}: ${m.mountPath} (${m.name}) -> ${source} (${mode}) in its arguments and environment`);
    }
  }
  return { mounts, rewrites };
}

// Replaces each mount path (followed by "/", a quote, a space or the end) in `text`.
function rewritePaths(text, rewrites) {
  let out = text;
  for (const [from, to] of [...rewrites].sort((a, b) => b[0].length - a[0].length)) {
    const escaped = from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    out = out.replace(new RegExp(`(^|[\\s"'=:])${escaped}(?=$|[/\\s"'])`, "g"), `$1${to}`);
  }
  return out;
}

// --- Environment -------------------------------------------------------------------
function containerEnv(pod, container) {
  const env = [];
  for (const e of container.env ?? []) {
    if (e.value !== undefined) env.push([e.name, String(e.value)]);
    else if (e.valueFrom?.secretKeyRef) {
      const { name, key } = e.valueFrom.secretKeyRef;
      const secret = named("Secret", name) ?? refuse(`pod ${pod.name}: env ${e.name} reads Secret ${name}, not rendered`);
      env.push([e.name, Buffer.from(secret.data[key], "base64").toString()]);
    } else if (e.valueFrom?.fieldRef?.fieldPath === "metadata.name") env.push([e.name, pod.name]);
    else if (e.valueFrom?.fieldRef?.fieldPath === "metadata.namespace") env.push([e.name, ns]);
    else refuse(`pod ${pod.name}: env ${e.name} has a source the play does not know: ${JSON.stringify(e)}`);
  }
  if ((container.envFrom ?? []).length > 0) refuse(`pod ${pod.name}: envFrom is not played`);
  return env;
}

// --- Pods --------------------------------------------------------------------------
const pods = [];
let nextHost = 2;  // .1 is the bridge: the node

function podUser(spec, container) {
  const s = { ...(spec.securityContext ?? {}), ...(container.securityContext ?? {}) };
  if (s.runAsNonRoot && !(s.runAsUser > 0)) refuse("runAsNonRoot without a runAsUser: the play needs the uid");
  return {
    uid: s.runAsUser ?? 0,
    gid: s.runAsGroup ?? s.runAsUser ?? 0,
    fsGroup: spec.securityContext?.fsGroup ?? s.runAsGroup ?? 0,
    readOnlyRoot: Boolean(container.securityContext?.readOnlyRootFilesystem),
  };
}

function probesOf(container) {
  const lines = [];
  for (const kind of ["startup", "liveness", "readiness"]) {
    const p = container[`${kind}Probe`];
    if (!p) continue;
    // The kubelet's defaults: timeoutSeconds 1, periodSeconds 10, failureThreshold 3.
    const head = `${kind} ${p.timeoutSeconds ?? 1} ${(p.periodSeconds ?? 10) * (p.failureThreshold ?? 3)}`;
    if (p.grpc) {
      if (typeof p.grpc.port !== "number") refuse(`${kind}Probe.grpc.port ${p.grpc.port}: the kubelet takes a number only`);
      lines.push(`${head} grpc ${p.grpc.port} ${p.grpc.service ?? ""}`.trim());
    } else if (p.tcpSocket) {
      const port = typeof p.tcpSocket.port === "number" ? p.tcpSocket.port
        : (container.ports ?? []).find((q) => q.name === p.tcpSocket.port)?.containerPort;
      if (!port) refuse(`${kind}Probe.tcpSocket.port ${p.tcpSocket.port}: no such container port`);
      lines.push(`${head} tcp ${port}`);
    } else refuse(`${kind}Probe: only grpc and tcpSocket probes are played`);
  }
  return lines;
}

// The container's command line, as the pod runs it: `extra.replaceCommand` applied (a
// stand-in), mount paths rewritten (the launcher's also with the workers', where its
// mpirun command runs), and the program found in the pods' PATH.
function podCommand(name, container, extra, rewrites) {
  let argv = [...(container.command ?? []), ...(container.args ?? [])];
  if (argv.length === 0) refuse(`pod ${name}: no command; the play cannot know the image's entrypoint`);
  if (extra.replaceCommand) argv = extra.replaceCommand(argv);
  const argvRewrites = [...rewrites, ...(extra.commandRewrites ?? [])];
  argv = argv.map((a) => rewritePaths(a, argvRewrites));
  const program = argv[0];
  if (!program.includes("/")) {
    const found = podPath.split(":").map((d) => join(d, program)).find((p) => existsSync(p));
    if (!found) refuse(`pod ${name}: ${program} is not in ${podPath}`);
    if (found.startsWith(binDir)) note(`${name}: ${program} is ${found} (the image's /usr/local/bin/${program})`);
  }
  return argv;
}

function writePodFiles(pod, argv, env, mounts) {
  const dir = join(work, "pods", pod.name);
  writeFile(join(dir, "argv"), argv.map((a) => `${a}\0`).join(""));
  writeFile(join(dir, "env"), env.map(([k, v]) => `${k}=${v}\0`).join(""));
  writeFile(join(dir, "mounts"), mounts.map((m) => `${m.join("\t")}\n`).join(""));
  writeFile(join(dir, "probes"), probesOf(pod.container).map((l) => `${l}\n`).join(""));
  writeFile(join(dir, "pod.sh"), shellVars({
    POD: pod.name, ROLE: pod.role, IP: pod.ip, POD_HOSTNAME: pod.hostname, RUN_AS_UID: pod.user.uid,
    RUN_AS_GID: pod.user.gid, FS_GROUP: pod.user.fsGroup, READ_ONLY_ROOT: pod.user.readOnlyRoot ? 1 : 0,
    RESTART_POLICY: pod.restartPolicy, BACKOFF_LIMIT: pod.backoffLimit, WORKDIR: homePath,
  }));
}

// Adds a pod: `template` is a PodTemplateSpec; `extra` what a controller adds to it
// (role, hostname, subdomain, restartPolicy, backoffLimit, volumes and volumeMounts,
// env, claimTemplates, replaceCommand, commandRewrites).
function addPod(name, template, extra) {
  const spec = template.spec;
  if (spec.containers.length !== 1) refuse(`pod ${name}: ${spec.containers.length} containers; the play runs one`);
  if ((spec.initContainers ?? []).length > 0) refuse(`pod ${name}: init containers are not played`);
  const container = spec.containers[0];
  const pod = { name, role: extra.role, hostname: spec.hostname ?? extra.hostname ?? name,
                subdomain: extra.subdomain ?? spec.subdomain, ip: `${args.subnet}.${nextHost++}`,
                labels: template.metadata?.labels ?? {}, restartPolicy: extra.restartPolicy,
                backoffLimit: extra.backoffLimit ?? "", user: podUser(spec, container), container };
  const volumes = [...(spec.volumes ?? []), ...(extra.volumes ?? [])];
  const withMounts = { ...container, volumeMounts: [...(container.volumeMounts ?? []), ...(extra.volumeMounts ?? [])] };
  const { mounts, rewrites } = planMounts(pod, withMounts, volumes, extra.claimTemplates ?? new Set());
  const argv = podCommand(name, container, extra, rewrites);
  const env = [["PATH", podPath], ["HOME", homePath], ["HOSTNAME", pod.hostname],
               ...containerEnv(pod, container), ...(extra.env ?? [])].map(([k, v]) => [k, rewritePaths(v, rewrites)]);
  const home = ownedFolder(join(work, "pods", name, "home"), pod.user.uid, pod.user.gid);
  mounts.push([home, homePath, pod.user.readOnlyRoot ? "ro" : "rw"]);
  writePodFiles(pod, argv, env, mounts);
  pod.rewrites = rewrites;
  pods.push(pod);
  return pod;
}

const shq = (v) => `'${String(v).replace(/'/g, "'\\''")}'`;
const shellVars = (vars) => Object.entries(vars).map(([k, v]) =>
  Array.isArray(v) ? `${k}=(${v.map(shq).join(" ")})\n` : `${k}=${shq(v)}\n`).join("");

function matches(selector, labels) {
  return Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
}

const fqdn = (hostname, subdomain) => `${hostname}.${subdomain}.${ns}.svc`;

// The coordinator: a StatefulSet's pod <name>-0, hostname <name>-0, subdomain serviceName.
function playCoordinator() {
  const statefulSets = ofKind("StatefulSet");
  if (statefulSets.length !== 1) refuse(`expected one StatefulSet (the coordinator), rendered ${statefulSets.length}`);
  const sts = statefulSets[0];
  if (sts.spec.replicas !== 1) refuse(`StatefulSet ${sts.metadata.name}: replicas ${sts.spec.replicas}, the play runs 1`);
  return addPod(`${sts.metadata.name}-0`, sts.spec.template, {
    role: "coordinator", hostname: `${sts.metadata.name}-0`, subdomain: sts.spec.serviceName, restartPolicy: "Always",
    claimTemplates: new Set((sts.spec.volumeClaimTemplates ?? []).map((t) => t.metadata.name)),
  });
}

// The worker's ssh port: its container port "ssh", else its readiness probe's.
function sshPort(jobName, container) {
  return (container.ports ?? []).find((p) => p.name === "ssh")?.containerPort ??
    container.readinessProbe?.tcpSocket?.port ?? refuse(`MPIJob ${jobName}: the worker exposes no ssh port`);
}

// The workers, <job>-worker-<i> (hostname, subdomain <job>), running the sshd stand-in
// (pods/sshd_standin.mjs) on the ssh port instead of sshd; real sshd and its keys are not
// played, and the launcher reaches the stand-in through the rsh agent.
function playWorkers(job, port) {
  const jobName = job.metadata.name;
  const spec = job.spec.mpiReplicaSpecs.Worker;
  const container = spec.template.spec.containers[0];
  const standin = [resolve(args.node), join(dirname(fileURLToPath(import.meta.url)), "sshd_standin.mjs"), "--port",
                   String(port)];
  const replaceSshd = (argv) => {
    if (!/(^|\/)sshd$/.test(argv[0])) refuse(`MPIJob ${jobName}: workers run ${argv[0]}, expected sshd`);
    return standin;
  };
  note(`${jobName} workers: "${[...(container.command ?? []), ...(container.args ?? [])].join(" ")}" -> ` +
       `the sshd stand-in on port ${port} (tests/helm/pods/sshd_standin.mjs)`);
  note(`${jobName}: the operator's ssh key Secret at ${job.spec.sshAuthMountPath ?? "/root/.ssh"} is not made (no real ssh)`);
  return [...Array(spec.replicas ?? 0).keys()].map((i) => addPod(`${jobName}-worker-${i}`, spec.template, {
    role: "worker", hostname: `${jobName}-worker-${i}`, subdomain: jobName, restartPolicy: spec.restartPolicy ?? "Never",
    env: [["K_MPI_JOB_ROLE", "worker"]], replaceCommand: replaceSshd,
  }));
}

// The launcher, <job>-launcher: the operator's ConfigMap <job>-config (hostfile,
// discover_hosts.sh) at /etc/mpi, its launcher environment, and the rsh agent for ssh.
function playLauncher(job, workers, port) {
  const jobName = job.metadata.name;
  const slots = job.spec.slotsPerWorker ?? 1;
  const names = workers.map((w) => fqdn(w.hostname, w.subdomain));
  const mpiConfig = { name: "mpi-job-config", configMap: { name: `${jobName}-config` }, files: {
    "hostfile": { text: names.map((n) => `${n} slots=${slots}\n`).join(""), mode: 0o444 },
    "discover_hosts.sh": { text: `#!/bin/sh\n${names.map((n) => `echo ${n}\n`).join("")}`, mode: 0o555 },
  } };
  const agent = join(work, "bin", "rsh-agent");
  const launcher = addPod(`${jobName}-launcher`, job.spec.mpiReplicaSpecs.Launcher.template, {
    role: "launcher", restartPolicy: job.spec.mpiReplicaSpecs.Launcher.restartPolicy ?? "OnFailure",
    backoffLimit: job.spec.runPolicy?.backoffLimit ?? 6,
    volumes: [mpiConfig], volumeMounts: [{ name: "mpi-job-config", mountPath: "/etc/mpi" }],
    env: [["K_MPI_JOB_ROLE", "launcher"], ["OMPI_MCA_orte_keep_fqdn_hostnames", "true"],
          ["OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"],
          ["OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"], ["OMPI_MCA_orte_set_default_slots", String(slots)],
          ["NVIDIA_VISIBLE_DEVICES", ""], ["NVIDIA_DRIVER_CAPABILITIES", ""], ["OMPI_MCA_plm_rsh_agent", agent]],
    commandRewrites: workers[0]?.rewrites ?? [],
  });
  if ((workers[0]?.rewrites ?? []).length > 0) {
    note(`${launcher.name}: the mpirun command's ${workers[0].rewrites.map(([from]) => from).join(", ")} ` +
         "(mounted in the workers, where its ranks run) rewritten as in the workers");
  }
  note(`${launcher.name}: OMPI_MCA_plm_rsh_agent=${agent} stands in for the image's ssh ` +
       `(tests/helm/pods/rsh_agent.mjs, port ${port})`);
  return launcher;
}

// The MPIJob (the pool): what the MPI Operator (v2beta1, OpenMPI) makes of it.
function playMpiJob() {
  const mpiJobs = ofKind("MPIJob");
  if (mpiJobs.length !== 1) refuse(`the play runs one MPIJob (the pool); ${mpiJobs.length} are rendered`);
  const job = mpiJobs[0];
  const jobName = job.metadata.name;
  if (job.spec.mpiImplementation && job.spec.mpiImplementation !== "OpenMPI") {
    refuse(`MPIJob ${jobName}: mpiImplementation ${job.spec.mpiImplementation}; the play speaks Open MPI`);
  }
  if (job.spec.runLauncherAsWorker) refuse(`MPIJob ${jobName}: runLauncherAsWorker is not played`);
  const port = sshPort(jobName, job.spec.mpiReplicaSpecs.Worker.template.spec.containers[0]);
  const workers = playWorkers(job, port);
  return { jobName, port, workers, launcher: playLauncher(job, workers, port) };
}

// The `helm test` Job's pod.
function playTestJob() {
  const testJobs = ofKind("Job").filter((j) => j.metadata.annotations?.["helm.sh/hook"]?.includes("test"));
  if (testJobs.length !== 1) refuse(`expected one helm test Job, rendered ${testJobs.length}`);
  return addPod(testJobs[0].metadata.name, testJobs[0].spec.template, {
    role: "test", restartPolicy: testJobs[0].spec.template.spec.restartPolicy,
    backoffLimit: testJobs[0].spec.backoffLimit ?? 6,
  });
}

// --- The cluster's DNS and each pod's /etc/hosts ------------------------------------
// pods/cluster_dns.mjs answers at DNS_IP, as CoreDNS would: a Service's name
// <name>.<ns>.svc.cluster.local (here the address of the pod it selects, as there is no
// ClusterIP), and <hostname>.<subdomain>.<ns>.svc.cluster.local for a pod whose subdomain
// is a headless Service that has it among its endpoints: Ready pods only, unless the
// Service publishes not-ready addresses. The MPI Operator makes such a Service, <job>,
// for the workers (publishNotReadyAddresses only with runLauncherAsWorker). A pod's
// record that depends on its readiness goes to pods/<pod>/dns-record, for the test's
// endpoints loop to publish while the pod is Ready. Each pod's resolv.conf is the
// kubelet's (dnsPolicy ClusterFirst); its /etc/hosts the kubelet's (itself only).
const DNS_IP = `${args.subnet}.250`;
const DOMAIN = "cluster.local";

// Writes each pod's hosts and, when its name hangs on its readiness, dns-record;
// returns the records that do not.
function podRecords(headless) {
  const records = [];
  for (const pod of pods) {
    const own = pod.subdomain ? `${fqdn(pod.hostname, pod.subdomain)}.${DOMAIN}` : "";
    writeFile(join(work, "pods", pod.name, "hosts"), ["127.0.0.1 localhost", "::1 localhost ip6-localhost ip6-loopback",
      `${pod.ip} ${[own, pod.hostname].filter(Boolean).join(" ")}`, ""].join("\n"), 0o644);
    if (!own) continue;
    if (!headless.has(pod.subdomain)) {
      note(`${pod.name}: subdomain ${pod.subdomain} is not a headless Service, so ${own} is in no DNS (as in a cluster)`);
    } else if (headless.get(pod.subdomain)) {
      records.push(`${pod.ip} ${own}`);
    } else {
      writeFile(join(work, "pods", pod.name, "dns-record"), `${pod.ip} ${own}\n`, 0o644);
    }
  }
  return records;
}

// The records of the Services that have an address (not headless): the pod each selects.
function serviceRecords(headless) {
  const records = [];
  for (const svc of ofKind("Service").filter((s) => !headless.has(s.metadata.name))) {
    const target = pods.find((p) => matches(svc.spec.selector, p.labels)) ??
      refuse(`Service ${svc.metadata.name} selects no played pod`);
    for (const p of svc.spec.ports) {
      const containerPort = typeof p.targetPort === "number" ? p.targetPort
        : (target.container.ports ?? []).find((q) => q.name === (p.targetPort ?? p.port))?.containerPort ?? p.port;
      if (containerPort !== p.port) {
        refuse(`Service ${svc.metadata.name} port ${p.port} -> ${containerPort}: without kube-proxy the play needs them equal`);
      }
    }
    const name = `${svc.metadata.name}.${ns}.svc.${DOMAIN}`;
    records.push(`${target.ip} ${name}`);
    note(`Service ${svc.metadata.name}: the cluster DNS answers ${name} with pod ${target.name}'s address ` +
         `${target.ip} (no ClusterIP, no kube-proxy)`);
  }
  return records;
}

function planDns(jobName) {
  const headless = new Map(ofKind("Service").filter((svc) => svc.spec.clusterIP === "None")
    .map((svc) => [svc.metadata.name, Boolean(svc.spec.publishNotReadyAddresses)]));
  headless.set(jobName, false);
  note(`${jobName}: the operator's headless Service is played by the DNS records of the workers while they are Ready`);
  const records = [...podRecords(headless), ...serviceRecords(headless)];
  writeFile(join(work, "dns-records"), `${records.join("\n")}\n`, 0o644);
  writeFile(join(work, "resolv.conf"), `search ${ns}.svc.${DOMAIN} svc.${DOMAIN} ${DOMAIN}\n` +
    `nameserver ${DNS_IP}\noptions ndots:5\n`, 0o644);
}

// The images' user (Dockerfile: useradd --uid 1000 gantry), for Open MPI and the shells:
// this machine's passwd and group, plus that user when its uid is missing.
function writeImageUsers() {
  let passwd = readFileSync("/etc/passwd", "utf8");
  let group = readFileSync("/etc/group", "utf8");
  for (const uid of new Set(pods.map((p) => p.user.uid))) {
    if (!passwd.split("\n").some((l) => l.split(":")[2] === String(uid))) {
      passwd += `gantry:x:${uid}:${uid}::${homePath}:/bin/sh\n`;
      note(`/etc/passwd in the pods: added gantry (uid ${uid}), the images' user`);
    }
    if (!group.split("\n").some((l) => l.split(":")[2] === String(uid))) group += `gantry:x:${uid}:\n`;
  }
  writeFile(join(work, "passwd"), passwd, 0o644);
  writeFile(join(work, "group"), group, 0o644);
}

// plan.sh: what pods_test.sh needs to know of the play.
function writePlan(coordinator, pool, testPod) {
  const tokenSecret = ofKind("Secret").find((s) => s.data?.token) ?? refuse("no Secret with a token is rendered");
  const runsClaim = ofKind("PersistentVolumeClaim")[0]?.metadata.name ?? refuse("no runs PersistentVolumeClaim");
  const serviceName = ofKind("Service").find((svc) => matches(svc.spec.selector, coordinator.labels)) ??
    refuse("no Service selects the coordinator");
  const serveArgs = pool.launcher.container.args ?? [];
  const nameAt = serveArgs.indexOf("--name");
  if (nameAt < 0) refuse(`${pool.launcher.name}: gantry-worker serve has no --name, the group the test looks for`);
  writeFile(join(work, "plan.sh"), shellVars({
    COORDINATOR_POD: coordinator.name, COORDINATOR_IP: coordinator.ip, WORKER_PODS: pool.workers.map((w) => w.name),
    LAUNCHER_POD: pool.launcher.name, TEST_POD: testPod.name,
    SERVICE_ADDRESS: `${serviceName.metadata.name}.${ns}.svc:${serviceName.spec.ports.find((p) => p.name === "grpc").port}`,
    GROUP_NAME: serveArgs[nameAt + 1], RUNS_DIR: join(work, "volumes", `pvc-${runsClaim}`),
    TOKEN: Buffer.from(tokenSecret.data.token, "base64").toString(), SSH_PORT: pool.port, DNS_IP,
    ALL_PODS: pods.map((p) => p.name),
  }));
}

const coordinator = playCoordinator();
const pool = playMpiJob();
const testPod = playTestJob();
planDns(pool.jobName);
writeImageUsers();
writePlan(coordinator, pool, testPod);
console.log(`Played: ${pods.map((p) => `${p.name} (${p.role}, ${p.ip})`).join(", ")}`);
console.log("What the play does differently from a cluster:");
for (const s of substitutions) console.log(`  - ${s}`);
