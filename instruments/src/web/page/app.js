// The giving web dashboard: reads the run's state from /events (Server-Sent Events, a batch
// a few times a second with only what changed) and draws it; charts are SVG drawn here, so the
// page needs nothing from elsewhere. When the stream ends the last state stays on the page.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04",
  "#db2777", "#4b5563", "#65a30d"];
const WIDTH = 600, HEIGHT = 232, LEFT = 52, RIGHT = 8, TOP = 8, BOTTOM = 34;

const state = { batch: null, lines: new Map(), logScale: new Set(), colors: new Map(),
  xKeys: new Map(), hists: new Map(), histLabel: null };
const timings = { loadMs: null, latencies: [], updates: 0 };
const $ = (id) => document.getElementById(id);

function el(tag, attrs, text) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4))
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function fmt(x) {
  if (x === null || x === undefined || Number.isNaN(x)) return "–";
  const a = Math.abs(x);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return x.toExponential(2);
  if (Number.isInteger(x)) return String(x);
  // Four significant digits, without toPrecision's exponent for numbers of five digits.
  if (a >= 1e3) return String(Math.round(x));
  return x.toPrecision(4).replace(/\.?0+$/, "");
}

function rate(x, units) {
  if (x === null || x === undefined) return "–";
  const a = Math.abs(x);
  const s = a >= 1e6 ? (x / 1e6).toFixed(2) + "M" : a >= 1e3 ? (x / 1e3).toFixed(1) + "k" : x.toFixed(1);
  return s + " " + (units || "");
}

function duration(secs) {
  if (secs === null || secs === undefined || !Number.isFinite(secs)) return "–";
  secs = Math.round(secs);
  const h = Math.floor(secs / 3600), m = Math.floor(secs / 60) % 60, s = secs % 60;
  const two = (n) => String(n).padStart(2, "0");
  return h > 0 ? `${h}:${two(m)}:${two(s)}` : `${m}:${two(s)}`;
}

function color(label) {
  const name = label === null ? "" : label;
  if (!state.colors.has(name)) state.colors.set(name, COLORS[state.colors.size % COLORS.length]);
  return state.colors.get(name);
}

// Merges a batch's chart points: appended after what the page has, or in place of it.
function merge(batch) {
  for (const s of batch.series) {
    let lines = state.lines.get(s.key);
    if (!lines) { lines = new Map(); state.lines.set(s.key, lines); }
    const label = s.label === null ? "" : s.label;
    state.xKeys.set(s.key, s.x);
    const had = lines.get(label) || [];
    lines.set(label, s.from === 0 ? s.points : had.slice(0, s.from).concat(s.points));
  }
  // A model watch's histograms: columns appended, or the track whole after a thinning.
  for (const h of batch.hists || []) {
    const had = h.replace ? [] : state.hists.get(h.label) || [];
    state.hists.set(h.label, had.concat(h.columns));
  }
}

function renderHeader(b) {
  $("title").textContent = b.title;
  document.title = `${b.title} — giving`;
  const status = $("status");
  status.textContent = b.status;
  status.dataset.status = b.status;
  const started = new Date(b.started_ms);
  $("meta").textContent = `${b.host} · started ${started.toLocaleString()} · ` +
    `${b.events} events · ${b.dropped} dropped` +
    (b.series_refused ? ` · ${b.series_refused} values past the chart cap` : "") +
    (b.hists_refused ? ` · ${b.hists_refused} histograms not kept` : "");
}

function bar(fraction) {
  const outer = el("div", { class: "bar" });
  const fill = el("div", { class: "fill" });
  fill.style.width = `${Math.round(100 * Math.max(0, Math.min(1, fraction || 0)))}%`;
  outer.append(fill);
  return outer;
}

function renderProgress(b) {
  const pct = b.progress === null ? null : Math.round(100 * b.progress);
  $("run-bar").style.width = `${pct || 0}%`;
  const where = [];
  // One-based, as people count (and as the terminal dashboard shows): the last epoch of 1
  // is "epoch 1/1", the last step of 300 "step 300/300".
  if (b.epochs) where.push(`epoch ${(b.epoch ?? 0) + 1}/${b.epochs}`);
  if (b.total_steps) where.push(`step ${(b.step ?? -1) + 1}/${b.total_steps}`);
  const text = pct === null ? "–" : `${pct}%`;
  $("run-progress").textContent = `${text} ${where.join(" ")} eta ${duration(b.eta)}`;
  $("run-progress").dataset.percent = pct === null ? "" : String(pct);
  const body = $("tasks").tBodies[0];
  body.replaceChildren();
  for (const t of b.tasks) {
    const fraction = t.total ? t.done / t.total : null;
    const row = el("tr", { "data-task": t.name });
    row.append(el("td", {}, t.name));
    const cell = el("td"); cell.append(bar(fraction)); row.append(cell);
    row.append(el("td", { class: "pct" }, fraction === null ? "" :
      `${Math.round(100 * fraction)}% ${t.done}/${t.total}`));
    row.append(el("td", {}, duration(t.eta)));
    row.append(el("td", { class: "rate" }, rate(t.rate, t.units)));
    body.append(row);
  }
}

function renderSources(b) {
  $("sources-panel").hidden = b.sources.length === 0;
  const body = $("sources").tBodies[0];
  body.replaceChildren();
  for (const s of b.sources) {
    const row = el("tr", { "data-source": s.name });
    row.append(el("td", {}, s.name + (s.done ? " (done)" : "")));
    row.append(el("td", {}, s.progress ? `${s.progress[0]}/${s.progress[1]}` : "–"));
    row.append(el("td", { class: "rate" }, rate(s.rate, s.units)));
    row.append(el("td", {}, fmt(s.loss)));
    row.append(el("td", {}, String(s.events)));
    body.append(row);
  }
}

// About n ticks at round values (1, 2 or 5 times a power of ten) within [lo, hi], as plotting
// libraries place them: a step axis reads 0, 100, 200, not 0, 74.75, 149.5.
function ticks(lo, hi, n) {
  if (hi === lo) return [lo];
  const raw = (hi - lo) / n;
  const magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
  // The round step nearest the raw one (d3's thresholds: √50, √10, √2).
  const ratio = raw / magnitude;
  const step = magnitude * (ratio >= 7.07 ? 10 : ratio >= 3.16 ? 5 : ratio >= 1.41 ? 2 : 1);
  const out = [];
  for (let i = Math.ceil(lo / step - 1e-9); i * step <= hi + step * 1e-9; i++) {
    out.push(Number((i * step).toPrecision(12)));
  }
  return out;
}

// One chart: a line per source (label), the same axes, a legend when there are several.
function chart(key, lines) {
  const log = state.logScale.has(key);
  const ty = log ? (y) => (y > 0 ? Math.log10(y) : null) : (y) => y;
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity, total = 0, latest = null;
  for (const points of lines.values()) {
    for (const [x, y] of points) {
      const v = ty(y);
      if (v === null) continue;
      x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, v); y1 = Math.max(y1, v);
    }
    total += points.length;
    if (points.length) latest = points[points.length - 1][1];
  }
  const box = el("div", { class: "chart", "data-key": key, "data-points": String(total),
    "data-lines": String(lines.size), "data-x": state.xKeys.get(key) || "" });
  const head = el("div", { class: "chart-head" });
  head.append(el("h3", {}, key), el("span", { class: "latest" }, fmt(latest)));
  const toggle = el("button", { type: "button", class: "log-toggle" }, log ? "linear" : "log");
  toggle.addEventListener("click", () => {
    if (state.logScale.has(key)) state.logScale.delete(key); else state.logScale.add(key);
    renderCharts();
  });
  head.append(toggle);
  box.append(head);
  const svg = el("svg:svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img",
    "aria-label": `${key} chart` });
  const w = WIDTH - LEFT - RIGHT, h = HEIGHT - TOP - BOTTOM;
  svg.append(el("svg:rect", { class: "frame", x: LEFT, y: TOP, width: w, height: h }));
  if (x0 <= x1) {
    // One value on an axis (a metric given once) gets one tick, at that value, centred.
    const yTicks = y0 === y1 ? [y0] : ticks(y0, y1, 4);
    const xTicks = x0 === x1 ? [x0] : ticks(x0, x1, 4);
    if (y0 === y1) { y0 -= 0.5; y1 += 0.5; }
    if (x0 === x1) { x0 -= 0.5; x1 += 0.5; }
    const px = (x) => LEFT + (x - x0) / (x1 - x0) * w;
    const py = (v) => TOP + h - (v - y0) / (y1 - y0) * h;
    for (const v of yTicks) {
      svg.append(el("svg:line", { class: "grid", x1: LEFT, x2: LEFT + w, y1: py(v), y2: py(v) }));
      svg.append(el("svg:text", { x: LEFT - 4, y: py(v) + 3, "text-anchor": "end" },
        fmt(log ? Math.pow(10, v) : v)));
    }
    for (const x of xTicks) {
      svg.append(el("svg:text", { x: px(x), y: HEIGHT - 18, "text-anchor": "middle" }, fmt(x)));
    }
    // The x axis' title: what the points' x is (global_step, step, or the events counted).
    svg.append(el("svg:text", { class: "axis-title", x: LEFT + w / 2, y: HEIGHT - 3,
      "text-anchor": "middle" }, state.xKeys.get(key) || ""));
    for (const [label, points] of lines) {
      const coords = [];
      for (const [x, y] of points) {
        const v = ty(y);
        if (v !== null) coords.push(`${px(x).toFixed(1)},${py(v).toFixed(1)}`);
      }
      svg.append(el("svg:polyline", { points: coords.join(" "), stroke: color(label),
        "data-label": label, "data-points": String(points.length) }));
      // A line of a few points (a validation loss per epoch) shows its points too.
      if (coords.length <= 20) {
        for (const xy of coords) {
          const [cx, cy] = xy.split(",");
          svg.append(el("svg:circle", { cx, cy, r: 2.5, fill: color(label) }));
        }
      }
    }
  }
  box.append(svg);
  const named = [...lines.keys()].filter((l) => l !== "");
  if (named.length) {
    const legend = el("ul", { class: "legend" });
    for (const label of named) {
      const item = el("li", { "data-label": label });
      const swatch = el("span", { class: "swatch" });
      swatch.style.background = color(label);
      item.append(swatch, document.createTextNode(label));
      legend.append(item);
    }
    box.append(legend);
  }
  return box;
}

function renderCharts() {
  const keys = [...state.lines.keys()].sort((a, b) =>
    (a === "loss" ? -1 : b === "loss" ? 1 : a.localeCompare(b)));
  $("charts").replaceChildren(...keys.map((k) => chart(k, state.lines.get(k))));
  renderLayers();
  renderHistogram();
}

// Labels under columns of watched steps, evenly spaced from `left`, `cell` wide: about five.
function stepLabels(svg, steps, left, cell, y) {
  const every = Math.max(1, Math.ceil(steps.length / 5));
  steps.forEach((x, i) => {
    if (i % every === 0) {
      svg.append(el("svg:text", { x: left + (i + 0.5) * cell, y, "text-anchor": "middle" }, fmt(x)));
    }
  });
}

// A colour from pale (0) to dark blue (1), for the heatmap's log scale.
function heat(t) {
  const hue = 50 + 180 * t, light = 88 - 58 * t;
  return `hsl(${hue.toFixed(0)}, 75%, ${light.toFixed(0)}%)`;
}

// The model watch per layer: a row per watched parameter in the watch's order, a column per
// watched step, each cell its gradient's norm on a log colour scale (vanishing gradients pale,
// exploding ones dark), read from the `norm` chart's `grad/…` lines. Charts keep finite values
// only, so a step whose norm was NaN or infinite leaves its cell empty (--stop-on-nonfinite
// names the parameter).
function renderLayers() {
  const norms = state.lines.get("norm");
  const rows = norms ? [...norms].filter(([label]) => label.startsWith("grad/")) : [];
  $("layers-panel").hidden = rows.length === 0;
  if (!rows.length) return;
  const steps = [...new Set(rows.flatMap(([, points]) => points.map(([x]) => x)))]
    .sort((a, b) => a - b);
  const column = new Map(steps.map((x, i) => [x, i]));
  let lo = Infinity, hi = -Infinity;
  for (const [, points] of rows) {
    for (const [, y] of points) {
      if (y > 0) { lo = Math.min(lo, Math.log10(y)); hi = Math.max(hi, Math.log10(y)); }
    }
  }
  const NAME = 170, ROW = 16, TOP_AXIS = 4, AXIS = 18;
  const cell = Math.max(2, (WIDTH - NAME - RIGHT) / steps.length);
  const height = TOP_AXIS + rows.length * ROW + AXIS;
  const svg = el("svg:svg", { viewBox: `0 0 ${WIDTH} ${height}`, role: "img",
    "aria-label": "gradient norm per layer" });
  rows.forEach(([label, points], i) => {
    const y = TOP_AXIS + i * ROW;
    const param = label.slice("grad/".length);
    svg.append(el("svg:text", { x: NAME - 6, y: y + ROW - 4, "text-anchor": "end" }, param));
    for (const [x, v] of points) {
      const t = v > 0 && hi > lo ? (Math.log10(v) - lo) / (hi - lo) : 0;
      const rect = el("svg:rect", { class: "cell", x: (NAME + column.get(x) * cell).toFixed(1), y,
        width: cell.toFixed(1), height: ROW - 1, fill: heat(t), "data-param": param,
        "data-step": String(x), "data-value": String(v) });
      rect.append(el("svg:title", {}, `${param} at step ${x}: |grad| ${fmt(v)}`));
      svg.append(rect);
    }
  });
  const axisY = height - 5;
  // Columns are the watched steps, evenly spaced: about five of them labelled.
  stepLabels(svg, steps, NAME, cell, axisY);
  const scale = lo <= hi ? `|grad| from ${fmt(10 ** lo)} (pale) to ${fmt(10 ** hi)} (dark), log scale; step →`
    : "every gradient norm is 0";
  $("layers").replaceChildren(svg, el("p", { class: "scale" }, scale));
}

// One watched tensor's histograms over time (TensorBoard's Histograms and Distributions tabs
// for one tag): a column per watched step, the value on the y axis, each bin a cell shaded by
// its share of the column's largest bin, so the spread of the weights or gradients and its
// drift read at a glance; shaded on a log scale, since a gradient's elements crowd near zero
// and its tails, a few elements each, would be invisible on a linear one. The tensor is
// chosen in the panel's list (a gradient first).
function renderHistogram() {
  const labels = [...state.hists.keys()];
  $("hist-panel").hidden = labels.length === 0;
  if (!labels.length) return;
  const select = $("hist-select");
  if (!state.histLabel || !state.hists.has(state.histLabel)) {
    state.histLabel = labels.find((l) => l.startsWith("grad/")) || labels[0];
  }
  if (select.options.length !== labels.length) {
    select.replaceChildren(...labels.map((l) => el("option", { value: l }, l)));
    select.onchange = () => { state.histLabel = select.value; renderHistogram(); };
  }
  select.value = state.histLabel;
  const columns = state.hists.get(state.histLabel);
  const lo = Math.min(...columns.map((c) => c.min)), hi = Math.max(...columns.map((c) => c.max));
  const span = hi > lo ? hi - lo : 1;
  const H = 180, AXIS = 18;
  const cell = (WIDTH - LEFT - RIGHT) / columns.length;
  const y = (v) => TOP + H - ((v - lo) / span) * H;
  const svg = el("svg:svg", { viewBox: `0 0 ${WIDTH} ${TOP + H + AXIS}`, role: "img",
    "aria-label": `histogram over time of ${state.histLabel}` });
  columns.forEach((c, i) => {
    const total = c.counts.reduce((a, b) => a + b, 0);
    const most = Math.max(...c.counts);
    const width = (c.max - c.min) / c.counts.length;
    const group = el("svg:g", { class: "column", "data-step": String(c.step),
      "data-total": String(total), "data-bins": String(c.counts.length) });
    c.counts.forEach((count, b) => {
      if (count <= 0) return;
      const top = y(c.min + (b + 1) * width), bottom = y(c.min + b * width);
      const rect = el("svg:rect", { class: "bin", x: (LEFT + i * cell).toFixed(1),
        y: top.toFixed(1), width: Math.max(1, cell - 0.5).toFixed(1),
        height: Math.max(1, bottom - top).toFixed(1), fill: heat(Math.log1p(count) / Math.log1p(most)) });
      rect.append(el("svg:title", {},
        `step ${c.step}: ${fmt(count)} in [${fmt(c.min + b * width)}, ${fmt(c.min + (b + 1) * width)})`));
      group.append(rect);
    });
    svg.append(group);
  });
  for (const v of hi > lo ? [lo, lo <= 0 && hi >= 0 ? 0 : (lo + hi) / 2, hi] : [lo]) {
    svg.append(el("svg:text", { x: LEFT - 6, y: y(v) + 4, "text-anchor": "end" }, fmt(v)));
  }
  stepLabels(svg, columns.map((c) => c.step), LEFT, cell, TOP + H + AXIS - 4);
  $("hist").replaceChildren(svg, el("p", { class: "scale" },
    "each column a watched step (→), the values on the y axis; darker: more elements in the bin (log scale)"));
}

function renderMachine(b) {
  const gpus = Object.entries(b.gpus);
  $("gpus-panel").hidden = gpus.length === 0;
  const body = $("gpus").tBodies[0];
  body.replaceChildren();
  for (const [index, g] of gpus) {
    const row = el("tr");
    row.append(el("td", {}, index), el("td", {}, g.load === null ? "–" : `${Math.round(100 * g.load)}%`),
      el("td", {}, g.memory ? `${fmt(g.memory[0])} / ${fmt(g.memory[1])} MB` : "–"),
      el("td", {}, g.temperature === null ? "–" : `${fmt(g.temperature)} °C`),
      el("td", {}, g.power === null ? "–" : `${fmt(g.power)} W`));
    body.append(row);
  }
  const cpu = Object.entries(b.cpu);
  $("cpu-panel").hidden = cpu.length === 0;
  const list = $("cpu");
  list.replaceChildren();
  for (const [group, values] of cpu) {
    const entries = values && typeof values === "object" ? Object.entries(values) : [["", values]];
    for (const [k, v] of entries) {
      list.append(el("dt", {}, k ? `${group}.${k}` : group),
        el("dd", {}, cpuValue(v)));
    }
  }
}

// A CPU monitor's value as a person reads it: a number formatted, a list (one value per
// core) as its numbers side by side, anything else as text.
function cpuValue(v) {
  if (typeof v === "number") return fmt(v);
  if (Array.isArray(v)) return v.map((x) => (typeof x === "number" ? fmt(x) : String(x))).join("  ");
  return typeof v === "string" ? v : JSON.stringify(v);
}

function renderProblems(b) {
  $("problems-panel").hidden = b.problem_count === 0;
  $("problems").replaceChildren(...b.problems.map((p) => el("li", {}, p)));
}

function render(b) {
  renderHeader(b);
  renderProgress(b);
  renderSources(b);
  renderCharts();
  renderMachine(b);
  renderProblems(b);
}

// Timings, for the browser test and the curious: page load to first full render, and how long
// after an event its update was drawn (from the event's wall-clock time).
function record(b) {
  const now = Date.now();
  timings.updates += 1;
  const t = $("timings");
  if (timings.loadMs === null) {
    timings.loadMs = performance.now();
    t.dataset.loadMs = timings.loadMs.toFixed(1);
  }
  if (b.status === "running" && b.last_event_ms !== null && b.series.length) {
    const latency = now - b.last_event_ms;
    timings.latencies.push(latency);
    if (timings.latencies.length > 1000) timings.latencies.shift();
    t.dataset.latencyMs = String(latency);
    t.dataset.maxLatencyMs = String(Math.max(...timings.latencies));
  }
  t.dataset.updates = String(timings.updates);
  $("footer").textContent = `${timings.updates} updates · load ${t.dataset.loadMs} ms` +
    (t.dataset.latencyMs ? ` · last update ${t.dataset.latencyMs} ms after its event` : "");
}

function connect() {
  const source = new EventSource("events");
  source.addEventListener("state", (message) => {
    const b = JSON.parse(message.data);
    state.batch = b;
    merge(b);
    render(b);
    record(b);
  });
  source.addEventListener("error", () => {
    // The server went away (the run ended and stopped serving): keep the last state on the
    // page; the browser retries on its own.
    if (state.batch && source.readyState !== EventSource.OPEN) {
      const status = $("status");
      status.textContent = `${state.batch.status} (disconnected)`;
      status.dataset.status = state.batch.status === "finished" ? "finished" : "disconnected";
    }
  });
}

function setupStop() {
  const token = document.querySelector('meta[name="giving-token"]').content;
  const button = $("stop");
  if (!token) return;
  button.hidden = false;
  let armed = false;
  button.addEventListener("click", async () => {
    if (!armed) { armed = true; button.textContent = "Click again to stop"; return; }
    button.disabled = true;
    const answer = await fetch("stop", { method: "POST", headers: { "X-Giving-Token": token } });
    button.textContent = answer.ok ? "Stopping…" : `Refused (${answer.status})`;
  });
}

setupStop();
connect();
