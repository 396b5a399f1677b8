// The gantry dashboard: polls the coordinator's JSON endpoints (same origin) and draws
// tables and SVG charts. Text from the server only ever goes in through textContent.
"use strict";

const POLL_MS = 2000;
const SVG_NS = "http://www.w3.org/2000/svg";
const COLORS = ["#2f6fb3", "#d0672a", "#1f7a3a", "#8e44ad", "#b3261e", "#16808a"];
let selected = decodeURIComponent(location.hash.slice(1)) || null;
let liveLosses = {};  // job id -> [{step, d, g}] from progress reports seen while watching

function $(id) { return document.getElementById(id); }

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = String(text);
  return e;
}

function fmt(x, digits) {
  if (x === null || x === undefined || Number.isNaN(x)) return "-";
  return Number(x).toFixed(digits === undefined ? 2 : digits);
}

function duration(s) {
  if (s === null || s === undefined) return "-";
  s = Math.max(0, Math.round(s));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  if (h > 0) return h + "h" + String(m).padStart(2, "0") + "m";
  if (m > 0) return m + "m" + String(sec).padStart(2, "0") + "s";
  return sec + "s";
}

function stateName(state) { return String(state).replace("JOB_STATE_", "").replace("GROUP_STATE_", "").toLowerCase(); }

async function getJson(url) {
  const r = await fetch(url, { credentials: "same-origin", cache: "no-store" });
  if (r.status === 401) { const e = new Error("unauthorized"); e.status = 401; throw e; }
  if (!r.ok) { const e = new Error(url + ": HTTP " + r.status); e.status = r.status; throw e; }
  return r.json();
}

function fillTable(table, rows) {
  const body = table.tBodies[0];
  body.replaceChildren();
  for (const row of rows) {
    const tr = document.createElement("tr");
    for (const cell of row) tr.appendChild(cell instanceof Node ? wrapCell(cell) : el("td", cell));
    body.appendChild(tr);
  }
  return body;
}

function wrapCell(node) { const td = document.createElement("td"); td.appendChild(node); return td; }

function progressCell(job) {
  const o = job.outlook;
  const span = document.createElement("span");
  if (!o) { span.textContent = "-"; return span; }
  const bar = el("span", null, "bar");
  const fill = document.createElement("span");
  fill.style.width = (100 * o.fraction_done).toFixed(1) + "%";
  bar.appendChild(fill);
  span.appendChild(bar);
  span.appendChild(document.createTextNode((100 * o.fraction_done).toFixed(0) + "%"));
  return span;
}

async function allJobs() {
  let jobs = [], token = "";
  for (let page = 0; page < 10; page++) {
    const r = await getJson("/api/jobs?page_size=1000&page_token=" + encodeURIComponent(token));
    jobs = jobs.concat(r.jobs);
    token = r.next_page_token;
    if (!token) break;
  }
  return jobs.reverse();  // newest first
}

function renderJobs(jobs) {
  const body = fillTable($("jobs"), jobs.map(j => {
    const p = j.progress;
    const state = el("span", stateName(j.state), "state-" + stateName(j.state));
    if (j.waiting_reason) state.title = "waits: " + j.waiting_reason;  // why no group has taken it
    const eta = j.outlook && j.outlook.eta_seconds !== null ? duration(j.outlook.eta_seconds) : "-";
    return [j.id, j.name || "", state, progressCell(j), eta, p ? fmt(p.samples_per_s, 1) : "-", j.group_id || "-",
            j.created_unix_ms ? new Date(j.created_unix_ms).toLocaleString() : "-"];
  }));
  [...body.rows].forEach((tr, i) => {
    const id = jobs[i].id;
    if (id === selected) tr.classList.add("selected");
    tr.addEventListener("click", () => { selected = id; location.hash = id; refresh(); });
  });
}

// A bar chart of `values` labelled by `labels`.
function barChart(container, labels, values, unit) {
  const W = 420, H = 200, L = 48, B = 28, T = 12;
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img" });
  const max = Math.max(...values, 0) || 1;
  const n = values.length, slot = (W - L - 8) / Math.max(n, 1);
  s.appendChild(svg("line", { x1: L, y1: H - B, x2: W - 4, y2: H - B, stroke: "#999" }));
  for (let k = 0; k <= 4; k++) {
    const y = H - B - (H - B - T) * k / 4;
    s.appendChild(svg("line", { x1: L - 3, y1: y, x2: W - 4, y2: y, stroke: "#eee" }));
    s.appendChild(svg("text", { x: L - 6, y: y + 4, "text-anchor": "end" }, fmt(max * k / 4, max >= 100 ? 0 : 1)));
  }
  values.forEach((v, i) => {
    const h = (H - B - T) * v / max, x = L + i * slot + slot * 0.15;
    s.appendChild(svg("rect", { x, y: H - B - h, width: slot * 0.7, height: h, fill: COLORS[0] }));
    s.appendChild(svg("text", { x: x + slot * 0.35, y: H - B - h - 3, "text-anchor": "middle" }, fmt(v, v >= 100 ? 0 : 1)));
    s.appendChild(svg("text", { x: x + slot * 0.35, y: H - B + 15, "text-anchor": "middle" }, labels[i]));
  });
  s.appendChild(svg("text", { x: W - 4, y: H - 2, "text-anchor": "end" }, unit));
  container.replaceChildren(s);
}

// Line chart: `series` = [{name, points: [[x, y], ...]}].
function lineChart(container, series, xLabel) {
  const W = 420, H = 200, L = 48, B = 28, T = 12, R = 8;
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img" });
  const pts = series.flatMap(x => x.points).filter(p => p[1] !== null && Number.isFinite(p[1]));
  if (pts.length === 0) { container.replaceChildren(el("p", "no data yet", "muted")); return; }
  let x0 = Math.min(...pts.map(p => p[0])), x1 = Math.max(...pts.map(p => p[0]));
  let y0 = Math.min(...pts.map(p => p[1])), y1 = Math.max(...pts.map(p => p[1]));
  if (x1 === x0) x1 = x0 + 1;
  if (y1 === y0) { y1 += 0.5; y0 -= 0.5; }
  const X = x => L + (W - L - R) * (x - x0) / (x1 - x0), Y = y => H - B - (H - B - T) * (y - y0) / (y1 - y0);
  s.appendChild(svg("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#999" }));
  for (let k = 0; k <= 4; k++) {
    const v = y0 + (y1 - y0) * k / 4;
    s.appendChild(svg("line", { x1: L, y1: Y(v), x2: W - R, y2: Y(v), stroke: "#eee" }));
    s.appendChild(svg("text", { x: L - 6, y: Y(v) + 4, "text-anchor": "end" }, fmt(v, 2)));
  }
  s.appendChild(svg("text", { x: L, y: H - 8 }, fmt(x0, 0)));
  s.appendChild(svg("text", { x: W - R, y: H - 8, "text-anchor": "end" }, fmt(x1, 0) + " " + xLabel));
  series.forEach((ser, i) => {
    const d = ser.points.filter(p => p[1] !== null && Number.isFinite(p[1]))
                        .map((p, k) => (k ? "L" : "M") + X(p[0]).toFixed(1) + " " + Y(p[1]).toFixed(1)).join(" ");
    const color = COLORS[i % COLORS.length];
    s.appendChild(svg("path", { d, fill: "none", stroke: color, "stroke-width": 2 }));
    for (const p of ser.points) {
      if (p[1] !== null && Number.isFinite(p[1]) && ser.points.length <= 60) {
        s.appendChild(svg("circle", { cx: X(p[0]), cy: Y(p[1]), r: 2.5, fill: color }));
      }
    }
    s.appendChild(svg("text", { x: L + 8 + 90 * i, y: T + 2, fill: color, class: "legend-label" }, ser.name));
  });
  container.replaceChildren(s);
}

// Whether an epoch has a Kernel Inception Distance (null when not: a judge's run, or a row
// from a worker before the field).
function hasKid(e) { return Number.isFinite(e.quality_kid); }

// Whether an epoch was scored (quality_fd is -1 when not; a row from an older worker has
// no quality fields at all): by the judge (a confidence above 0) or by random features (a KID).
function scored(e) {
  return e.quality_fd !== undefined && e.quality_fd >= 0 && (e.quality_confidence > 0 || hasKid(e));
}

// What the judge alone measures: its columns are -1 for an epoch the random features scored.
function judged(e) { return scored(e) && e.quality_confidence > 0; }

// energy_source: 1 estimate, 2 RAPL, 3 NVML (the GPUs); 0 or absent in older rows.
function energyCell(e) {
  if (!(e.energy_j > 0)) return "-";
  return fmt(e.energy_j, 0) + (e.energy_estimated ? " (est.)" : e.energy_source === 3 ? " (GPU)" : "");
}

// The Fréchet distance of each scored epoch, one line per batch size (epoch on the x axis).
function renderQuality(epochs) {
  const byBatch = new Map();
  for (const e of epochs.filter(scored)) {
    if (!byBatch.has(e.batch_size)) byBatch.set(e.batch_size, []);
    byBatch.get(e.batch_size).push([e.epoch, e.quality_fd]);
  }
  $("quality-card").hidden = byBatch.size === 0;
  if (byBatch.size === 0) return;
  lineChart($("chart-quality"), [...byBatch].map(([b, points]) => ({ name: "batch " + b, points })), "epoch");
}

// The time-to-target cells of a batch size's summary: "-" without a target (--target-fd),
// "never" while it has not been reached.
function toTarget(s) {
  if (!("target_reached" in s)) return ["-", "-"];
  if (!s.target_reached) return ["never", "never"];
  return [fmt(s.seconds_to_target) + " s", fmt(s.samples_to_target, 0)];
}

function renderJob(d) {
  const j = d.job;
  $("job").hidden = false;
  $("job-title").textContent = j.id + (j.name ? " — " + j.name : "");
  const p = j.progress;
  const parts = ["state " + stateName(j.state), "attempt " + j.attempts + " of " + j.max_attempts];
  if (j.group_id) parts.push("group " + j.group_id);
  if (p) parts.push(`batch ${p.batch_size} epoch ${p.epoch} step ${p.step}/${p.steps_per_epoch}`,
                    fmt(p.samples_per_s, 1) + " samples/s", "D " + fmt(p.d_loss, 3) + " G " + fmt(p.g_loss, 3));
  if (d.outlook) parts.push((100 * d.outlook.fraction_done).toFixed(0) + "% done",
                            "ETA " + (d.outlook.eta_seconds === null ? "-" : duration(d.outlook.eta_seconds)));
  if (j.error) parts.push("error: " + j.error);
  $("job-line").textContent = parts.join(" · ");

  fillTable($("summary"), d.summary.map(s => [s.batch_size, s.epochs, fmt(s.total_seconds), fmt(s.seconds_per_epoch),
    fmt(s.samples_per_s, 1), fmt(100 * s.allreduce_share, 1) + "%",
    s.change_vs_smallest === 0 ? "-" : (s.change_vs_smallest > 0 ? "+" : "") + fmt(100 * s.change_vs_smallest, 1) + "%",
    ...toTarget(s)]));
  fillTable($("epochs"), d.epochs.map(e => [e.batch_size, e.epoch, fmt(e.seconds), fmt(e.samples_per_s, 1),
    fmt(e.step_p50_ms), fmt(e.step_p99_ms), fmt(100 * e.allreduce_share, 1) + "%", fmt(e.d_loss, 4), fmt(e.g_loss, 4),
    fmt(e.loss_scale_g, 0) + " / " + fmt(e.loss_scale_d, 0), e.skipped_steps_g + " / " + e.skipped_steps_d,
    e.straggler_flags, e.world_size,
    scored(e) ? fmt(e.quality_fd, 3) : "-", judged(e) ? fmt(e.quality_class_entropy, 3) : "-",
    judged(e) ? fmt(e.quality_marginal_entropy, 3) : "-", judged(e) ? fmt(e.quality_confidence, 3) : "-",
    hasKid(e) ? Number(e.quality_kid).toPrecision(3) : "-", energyCell(e)]));
  renderQuality(d.epochs);
  fillTable($("stragglers"), d.stragglers_by_rank.map(r => [r.rank, r.events, fmt(r.max_ratio) + "x"]));
  $("stragglers-none").hidden = d.stragglers_by_rank.length > 0;

  barChart($("chart-time"), d.summary.map(s => s.batch_size), d.summary.map(s => s.total_seconds), "seconds");
  barChart($("chart-throughput"), d.summary.map(s => s.batch_size), d.summary.map(s => s.samples_per_s), "samples/s");

  // Loss curves: one point per epoch row, numbered across the sweep, per network.
  const dl = d.epochs.map((e, i) => [i + 1, e.d_loss]), gl = d.epochs.map((e, i) => [i + 1, e.g_loss]);
  const live = liveLosses[j.id] || (liveLosses[j.id] = []);
  if (p && (live.length === 0 || live[live.length - 1].key !== `${p.batch_size}/${p.epoch}/${p.step}`)) {
    live.push({ key: `${p.batch_size}/${p.epoch}/${p.step}`, x: d.epochs.length + p.step / Math.max(p.steps_per_epoch, 1), d: p.d_loss, g: p.g_loss });
  }
  const running = stateName(j.state) === "running";
  const series = [{ name: "D loss", points: dl }, { name: "G loss", points: gl }];
  if (running && live.length > 0) {
    series.push({ name: "D live", points: live.map(q => [q.x, q.d]) }, { name: "G live", points: live.map(q => [q.x, q.g]) });
  }
  lineChart($("chart-loss"), series, "epochs");

  const img = $("samples");
  if (d.sample_grid) {
    const src = `/api/jobs/${encodeURIComponent(j.id)}/samples.png?b=${d.sample_grid.batch_size}&e=${d.sample_grid.epoch}`;
    if (img.getAttribute("src") !== src) img.setAttribute("src", src);
    img.hidden = false;
    $("samples-none").hidden = true;
    $("samples-title").textContent = `Newest sample grid (batch ${d.sample_grid.batch_size}, epoch ${d.sample_grid.epoch})`;
  } else {
    img.hidden = true;
    $("samples-none").hidden = false;
    $("samples-title").textContent = "Newest sample grid";
  }
  $("generated-card").hidden = !d.generated_grid;
  if (d.generated_grid) {
    const src = `/api/jobs/${encodeURIComponent(j.id)}/generated.png?f=${encodeURIComponent(d.generated_grid)}`;
    if ($("generated").getAttribute("src") !== src) $("generated").setAttribute("src", src);
    $("generated-title").textContent = `Newest generated grid (${d.generated_grid})`;
  }
  $("rollout-card").hidden = !d.rollout;
  if (d.rollout) {
    getJson(`/api/jobs/${encodeURIComponent(j.id)}/rollout`).then(r => {
      $("rollout-marks").textContent = rolloutMarks(r);
      const series = r.columns.slice(1).map((name, c) => ({ name, points: r.rows.map(row => [row[0], row[c + 1]]) }));
      lineChart($("chart-rollout"), series, r.columns[0] || "");
    }).catch(() => { $("rollout-card").hidden = true; });
  }
}

// One line of a rollout's marks (rollout.json, through /rollout's "summary"): how long the
// vorticity correlation held each threshold, the blow-up, the Strouhal numbers.
function rolloutMarks(r) {
  if (r.summary_error) return `rollout summary unreadable: ${r.summary_error}`;
  const s = r.summary;
  if (!s) return "";
  const held = (threshold, below) => below == null ? `>= ${threshold} for all ${s.steps} steps`
                                                   : `>= ${threshold} for ${below - 1} steps`;
  const parts = [`vorticity correlation ${held(s.threshold, s.first_below)}, ${held(s.loose_threshold, s.first_below_loose)}`,
                 s.blow_up == null ? `no blow-up in ${s.steps} steps` : `blew up at step ${s.blow_up}`];
  if (s.strouhal_true != null) {
    parts.push(`Strouhal predicted ${s.strouhal_predicted == null ? "-" : fmt(s.strouhal_predicted, 4)}, true ${fmt(s.strouhal_true, 4)}`);
  }
  return parts.join("; ");
}

function renderGroups(groups) {
  fillTable($("groups"), groups.map(g => [g.id, g.name || "", stateName(g.state), g.world_size,
    [...new Set(g.devices)].join(", "), g.job_id || "-", fmt(g.seconds_since_heartbeat, 1) + " s ago"]));
}

async function refresh() {
  try {
    const [jobs, groups] = await Promise.all([allJobs(), getJson("/api/groups")]);
    $("login").hidden = true;
    $("main").hidden = false;
    if (!selected || !jobs.some(j => j.id === selected)) {
      const active = jobs.find(j => ["JOB_STATE_RUNNING", "JOB_STATE_CANCELLING"].includes(j.state));
      selected = active ? active.id : (jobs.length ? jobs[0].id : null);
    }
    renderJobs(jobs);
    renderGroups(groups.groups);
    if (selected) renderJob(await getJson("/api/jobs/" + encodeURIComponent(selected)));
    $("status").textContent = "updated " + new Date().toLocaleTimeString();
  } catch (e) {
    if (e.status === 401) {
      $("main").hidden = true;
      $("login").hidden = false;
      $("login-failed").hidden = !location.search.includes("login=failed");
      $("status").textContent = "";
    } else {
      $("status").textContent = "cannot reach the coordinator: " + e.message;
    }
  }
}

refresh();
setInterval(refresh, POLL_MS);
