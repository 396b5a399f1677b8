// Checks that every flag the chart passes to a gantry program is a flag of that program:
// each is looked up in the program's own `--help` (of the subcommand when there is one).
//
//   node check_flags.mjs COMMANDS.json [--text FILE]... NAME=BINARY...
//
// COMMANDS.json is validate.mjs --commands: [{where, argv}]. Each line of a --text file
// (the rendered NOTES.txt) is one more command line, split at white space. NAME is gantry-worker,
// gantry-coordinator or gantry; a program without a BINARY is reported as not checked.
// A container running `sh -c SCRIPT` is read token by token: flags that follow
// `set --` belong to the program whose arguments end in "$@".
//
// Exit 0 when every checked flag exists, 1 otherwise, 2 on bad usage.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

const SUBCOMMANDS = {
  "gantry-worker": ["serve", "train", "inspect"],
  "gantry-coordinator": [],
  gantry: ["submit", "jobs", "status", "watch", "cancel", "report", "groups"],
};
const OTHER_PROGRAMS = new Set(["mpirun", "mpiexec", "exec", "sh", "set"]);

const [commandsFile, ...rest] = process.argv.slice(2);
if (!commandsFile) {
  console.error("usage: node check_flags.mjs COMMANDS.json [--text FILE]... NAME=BINARY...");
  process.exit(2);
}
const commands = JSON.parse(readFileSync(commandsFile, "utf8"));
const pairs = [];
for (let i = 0; i < rest.length; i++) {
  if (rest[i] === "--text") {
    const file = rest[++i];
    readFileSync(file, "utf8").split("\n").forEach((line, n) => {
      commands.push({ where: `${file}:${n + 1}`, argv: line.trim().split(/\s+/) });
    });
  } else {
    pairs.push(rest[i]);
  }
}
const binaries = Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)]));

// [{program, subcommand, flags, where}] of one container's command line.
function segments(where, argv) {
  const tokens = argv[0] === "sh" && argv[1] === "-c" ? argv[2].split(/\s+/).map((t) => t.replace(/^["']|["']$/g, "")) : argv;
  const found = [];
  let current = null;
  let pending = null;  // flags after `set --`, for the program that takes "$@"
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t === "set" && tokens[i + 1] === "--") {
      pending = pending ?? [];
      current = { program: null, flags: pending };
      i++;
    } else if (t in SUBCOMMANDS) {
      const sub = SUBCOMMANDS[t].includes(tokens[i + 1]) ? tokens[i + 1] : null;
      current = { program: t, subcommand: sub, flags: [], where };
      found.push(current);
      // gantry's global flags come before its subcommand; it is found further on.
      if (sub) i++;
    } else if (OTHER_PROGRAMS.has(t)) {
      current = null;
    } else if (current && current.program === "gantry" && !current.subcommand && SUBCOMMANDS.gantry.includes(t)) {
      current.subcommand = t;
    } else if (t === "$@" || t === '"$@"') {
      if (current && pending) current.flags.push(...pending);
    } else if (current && /^--[a-z]/.test(t)) {
      current.flags.push(t.split("=")[0]);
    }
  }
  return found;
}

const helpCache = new Map();
function help(program, subcommand) {
  const key = `${program} ${subcommand ?? ""}`;
  if (!helpCache.has(key)) {
    const argv = subcommand ? [subcommand, "--help"] : ["--help"];
    let text = execFileSync(binaries[program], argv, { encoding: "utf8", timeout: 20000 });
    // gantry's global flags are in the top-level help.
    if (program === "gantry" && subcommand) text += execFileSync(binaries[program], ["--help"], { encoding: "utf8", timeout: 20000 });
    helpCache.set(key, text);
  }
  return helpCache.get(key);
}

let failures = 0;
let checked = 0;
const unchecked = new Set();
for (const { where, argv } of commands) {
  for (const seg of segments(where, argv)) {
    if (!binaries[seg.program]) {
      unchecked.add(seg.program);
      continue;
    }
    const text = help(seg.program, seg.subcommand);
    for (const flag of seg.flags) {
      checked++;
      // CLI11 lists an option as "--name" followed by a space, comma, '{' or the line end.
      if (!new RegExp(`(^|[\\s,])${flag}(?=[\\s,{=]|$)`, "m").test(text)) {
        failures++;
        console.log(`FAIL ${where}: ${seg.program}${seg.subcommand ? " " + seg.subcommand : ""} has no flag ${flag}`);
      }
    }
  }
}
console.log(`flags checked against --help: ${checked}, unknown: ${failures}` +
            (unchecked.size ? `; not checked (no binary given): ${[...unchecked].join(", ")}` : ""));
process.exit(failures > 0 ? 1 : 0);
