// The cluster's DNS, played (CoreDNS's part): answers A queries over UDP for the names
// in a records file, "IP NAME..." per line (the pods' <hostname>.<subdomain>.<ns>.svc.
// cluster.local and the Services' <name>.<ns>.svc.cluster.local; pods_test.sh keeps it
// up to date as pods turn Ready or not, and it is read again whenever it changes). A
// known name asked for another type gets an empty answer; an unknown name NXDOMAIN (no
// upstream: the pods reach nothing outside the test). Names match without regard to
// case, as DNS does.
//
//   node cluster_dns.mjs --records FILE --listen IP [--port 53]
import { createSocket } from "node:dgram";
import { readFileSync, statSync } from "node:fs";

const TYPE_A = 1;
const CLASS_IN = 1;
const TTL_SECONDS = 5;
const RCODE_NXDOMAIN = 3;
const RCODE_FORMERR = 1;

function usage(why) {
  console.error(`cluster_dns.mjs: ${why}\nusage: node cluster_dns.mjs --records FILE --listen IP [--port 53]`);
  process.exit(2);
}

function parseArgs(argv) {
  const a = { port: 53 };
  for (let i = 0; i < argv.length; i += 2) {
    if (argv[i] === "--records") a.records = argv[i + 1];
    else if (argv[i] === "--listen") a.listen = argv[i + 1];
    else if (argv[i] === "--port") a.port = Number(argv[i + 1]);
    else usage(`unknown argument ${argv[i]}`);
  }
  if (!a.records || !a.listen || !(a.port > 0)) usage("give --records and --listen");
  return a;
}

function loadRecords(path) {
  const records = new Map();
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const [ip, ...names] = line.trim().split(/\s+/);
    if (!ip || line.trim().startsWith("#")) continue;
    for (const name of names) records.set(name.toLowerCase().replace(/\.$/, ""), ip);
  }
  return records;
}

// The question of a query: its name, type and where the question section ends.
function readQuestion(msg) {
  const labels = [];
  let at = 12;
  while (at < msg.length && msg[at] !== 0) {
    const length = msg[at];
    if (length > 63 || at + 1 + length > msg.length) return null;  // compression is not used in questions
    labels.push(msg.subarray(at + 1, at + 1 + length).toString("latin1"));
    at += 1 + length;
  }
  if (at + 5 > msg.length) return null;
  return { name: labels.join(".").toLowerCase(), type: msg.readUInt16BE(at + 1), end: at + 5 };
}

function answer(msg, records) {
  if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return header(msg, RCODE_FORMERR, 0, 12);
  const q = readQuestion(msg);
  if (!q) return header(msg, RCODE_FORMERR, 0, 12);
  const ip = records.get(q.name);
  if (ip === undefined) return header(msg, RCODE_NXDOMAIN, 0, q.end);
  if (q.type !== TYPE_A) return header(msg, 0, 0, q.end);
  const rr = Buffer.alloc(16);
  rr.writeUInt16BE(0xc00c, 0);  // the name: a pointer to the question's
  rr.writeUInt16BE(TYPE_A, 2);
  rr.writeUInt16BE(CLASS_IN, 4);
  rr.writeUInt32BE(TTL_SECONDS, 6);
  rr.writeUInt16BE(4, 10);
  ip.split(".").forEach((part, i) => rr.writeUInt8(Number(part), 12 + i));
  return Buffer.concat([header(msg, 0, 1, q.end), rr]);
}

// The reply's header and question (copied from the query): QR, AA and RA set, RD kept.
function header(msg, rcode, answers, questionEnd) {
  const out = Buffer.from(msg.subarray(0, questionEnd));
  out.writeUInt16BE(0x8000 | 0x0400 | (msg.readUInt16BE(2) & 0x0100) | 0x0080 | rcode, 2);
  out.writeUInt16BE(questionEnd > 12 ? 1 : 0, 4);
  out.writeUInt16BE(answers, 6);
  out.writeUInt16BE(0, 8);
  out.writeUInt16BE(0, 10);
  return out;
}

const args = parseArgs(process.argv.slice(2));
let records = loadRecords(args.records);
let loadedVersion = statSync(args.records).mtimeMs;
// The records, read again when the file changed (it is replaced by a rename).
function currentRecords() {
  const version = statSync(args.records, { throwIfNoEntry: false })?.mtimeMs;
  if (version !== undefined && version !== loadedVersion) {
    records = loadRecords(args.records);
    loadedVersion = version;
  }
  return records;
}
const socket = createSocket("udp4");
socket.on("message", (msg, peer) => {
  if (msg.length < 12) return;
  socket.send(answer(msg, currentRecords()), peer.port, peer.address);
});
socket.on("error", (e) => {
  console.error(`cluster DNS: ${e.message}`);
  process.exit(1);
});
socket.bind(args.port, args.listen, () =>
  console.error(`cluster DNS: ${records.size} names on ${args.listen}:${args.port}`));
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
