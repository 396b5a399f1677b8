// The worker pod's sshd, played: listens on the ssh port and runs each connection's
// command with `/bin/sh -c` in this pod (its network, hostname, mounts and user), as
// sshd runs an `ssh HOST COMMAND` session. rsh_agent.mjs is the client; Open MPI's
// launcher starts its orted daemons through it. No keys and no encryption: the pods'
// bridge is private to the test.
//
//   node sshd_standin.mjs --port PORT
//
// Wire format (both files): the client sends one line of JSON, {"command": "..."}; the
// server answers with frames of [channel: 1 byte][length: 4 bytes, big-endian][payload]:
// channel 1 is the command's stdout, 2 its stderr, 3 its end as JSON ({"code": N} or
// {"signal": "SIGKILL"}). The command's stdin is /dev/null (ssh -n). When the client goes
// away first, the command's process group gets SIGHUP, then SIGKILL 2 s later, as sshd
// hangs up a session whose connection dropped.
import { spawn } from "node:child_process";
import { createServer } from "node:net";

const CHANNEL_STDOUT = 1;
const CHANNEL_STDERR = 2;
const CHANNEL_END = 3;
const MAX_COMMAND_BYTES = 1 << 20;

function usage(why) {
  console.error(`sshd_standin.mjs: ${why}\nusage: node sshd_standin.mjs --port PORT`);
  process.exit(2);
}

const argv = process.argv.slice(2);
if (argv.length !== 2 || argv[0] !== "--port" || !/^\d+$/.test(argv[1])) usage("give --port PORT");
const port = Number(argv[1]);

function frame(channel, payload) {
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  const head = Buffer.alloc(5);
  head.writeUInt8(channel, 0);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

function runSession(socket, command) {
  const peer = `${socket.remoteAddress}:${socket.remotePort}`;
  console.error(`sshd stand-in: ${peer} runs: ${command.length > 300 ? `${command.slice(0, 300)}...` : command}`);
  const child = spawn("/bin/sh", ["-c", command], { detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let ended = false;
  child.stdout.on("data", (d) => socket.write(frame(CHANNEL_STDOUT, d)));
  child.stderr.on("data", (d) => socket.write(frame(CHANNEL_STDERR, d)));
  child.on("error", (e) => {
    ended = true;
    socket.end(frame(CHANNEL_END, JSON.stringify({ code: 127, error: e.message })));
  });
  child.on("close", (code, signal) => {
    ended = true;
    console.error(`sshd stand-in: ${peer} session ended (${signal ?? `exit ${code}`})`);
    socket.end(frame(CHANNEL_END, JSON.stringify(signal ? { signal } : { code })));
  });
  socket.on("close", () => {
    if (ended) return;
    console.error(`sshd stand-in: ${peer} hung up; stopping its session`);
    const hangUp = (sig) => { try { process.kill(-child.pid, sig); } catch { /* already gone */ } };
    hangUp("SIGHUP");
    setTimeout(() => hangUp("SIGKILL"), 2000).unref();
  });
}

const server = createServer((socket) => {
  let pending = Buffer.alloc(0);
  let started = false;
  socket.on("error", () => {});  // a reset peer; "close" follows
  socket.on("data", (d) => {
    if (started) return;  // stdin is not forwarded
    pending = Buffer.concat([pending, d]);
    const newline = pending.indexOf(10);
    if (newline < 0) {
      if (pending.length > MAX_COMMAND_BYTES) socket.destroy();
      return;
    }
    started = true;
    let request;
    try {
      request = JSON.parse(pending.subarray(0, newline).toString());
    } catch {
      socket.end(frame(CHANNEL_END, JSON.stringify({ code: 255, error: "not a JSON request line" })));
      return;
    }
    runSession(socket, String(request.command ?? ""));
  });
});
server.listen(port, "0.0.0.0", () => console.error(`sshd stand-in: listening on 0.0.0.0:${port}`));
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
