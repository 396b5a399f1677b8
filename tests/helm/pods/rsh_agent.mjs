// The launcher's ssh, played: Open MPI's rsh agent (OMPI_MCA_plm_rsh_agent), called as
// ssh is, `AGENT [ssh options] HOST COMMAND...`. It resolves HOST in the launcher pod (its
// /etc/hosts, the cluster's DNS here), connects to the worker's sshd stand-in
// (sshd_standin.mjs, which documents the wire format), runs the words of COMMAND joined
// by spaces there, copies its stdout and stderr here and exits with its exit code: 255
// when the connection fails or drops, or the command died of a signal, as ssh does.
//
//   node rsh_agent.mjs --port PORT [-o Option=value]... [-x|-T|-n|-q]... [-p PORT] [-l USER] HOST COMMAND...
//
// Honoured: -o ConnectionAttempts=N (the MPI Operator sets 10: N tries to connect, 1 s
// apart, as ssh does; a name that does not resolve is not retried) and -p; the other
// options are accepted and ignored.
import { connect } from "node:net";

const CHANNEL_STDOUT = 1;
const CHANNEL_STDERR = 2;
const CHANNEL_END = 3;
const CONNECT_TIMEOUT_MS = 5000;

function usage(why) {
  console.error(`rsh_agent.mjs: ${why}\nusage: node rsh_agent.mjs --port PORT [ssh options] HOST COMMAND...`);
  process.exit(255);
}

function parseArgs(argv) {
  const a = { port: 0, attempts: 1, host: "", command: [] };
  let i = 0;
  for (; i < argv.length && argv[i].startsWith("-"); i++) {
    const opt = argv[i];
    if (opt === "--port" || opt === "-p") a.port = Number(argv[++i]);
    else if (opt === "-o") {
      const [key, value] = String(argv[++i]).split("=");
      if (key.toLowerCase() === "connectionattempts") a.attempts = Math.max(1, Number(value) || 1);
    } else if (opt === "-l" || opt === "-i" || opt === "-F") i++;
    else if (!/^-[xXTnqtvAa46]+$/.test(opt)) usage(`unknown option ${opt}`);
  }
  a.host = argv[i] ?? "";
  a.command = argv.slice(i + 1);
  if (!(a.port > 0) || !a.host || a.command.length === 0) usage("give --port, a host and a command");
  return a;
}

const args = parseArgs(process.argv.slice(2));

function tryConnect(attempt) {
  const socket = connect({ host: args.host, port: args.port, timeout: CONNECT_TIMEOUT_MS });
  let connected = false;
  let pending = Buffer.alloc(0);
  socket.on("timeout", () => socket.destroy(new Error("connection timed out")));
  socket.on("connect", () => {
    connected = true;
    socket.setTimeout(0);
    socket.write(`${JSON.stringify({ command: args.command.join(" ") })}\n`);
  });
  socket.on("data", (d) => {
    pending = Buffer.concat([pending, d]);
    while (pending.length >= 5) {
      const length = pending.readUInt32BE(1);
      if (pending.length < 5 + length) break;
      const channel = pending.readUInt8(0);
      const body = pending.subarray(5, 5 + length);
      pending = pending.subarray(5 + length);
      if (channel === CHANNEL_STDOUT) process.stdout.write(body);
      else if (channel === CHANNEL_STDERR) process.stderr.write(body);
      else if (channel === CHANNEL_END) finish(JSON.parse(body.toString()));
    }
  });
  socket.on("error", (e) => {
    if (connected) return;  // "close" reports it
    // ssh's ConnectionAttempts retries connecting, not resolving: a name the DNS does not
    // know (yet) ends it at once, as in kubeflow/mpi-operator#481.
    if (e.code === "ENOTFOUND" || e.code === "EAI_AGAIN") {
      console.error(`ssh: Could not resolve hostname ${args.host}: Name or service not known (rsh-agent)`);
      process.exit(255);
    }
    if (attempt < args.attempts) {
      setTimeout(() => tryConnect(attempt + 1), 1000);
    } else {
      console.error(`rsh-agent: ${args.host} port ${args.port}: ${e.message} (${attempt} attempt(s))`);
      process.exit(255);
    }
  });
  socket.on("close", () => {
    if (connected) {
      console.error(`rsh-agent: connection to ${args.host} closed before the command ended`);
      process.exit(255);
    }
  });
}

function finish(end) {
  const code = typeof end.code === "number" ? end.code : 255;
  if (end.error) console.error(`rsh-agent: ${args.host}: ${end.error}`);
  // Let stdout and stderr drain before exiting.
  process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
}

tryConnect(1);
