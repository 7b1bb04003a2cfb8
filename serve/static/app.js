// The dashboard: it polls the API every 2 s, keeps 5 minutes of counts
// to draw rates as SVG sparklines, and follows the selected query's
// matches. No library: the page works offline.
"use strict";

const POLL_MS = 2000, KEEP_MS = 5 * 60 * 1000, LATEST = 20;
const history = new Map(); // "s:name" or "q:id" -> [[time, count], ...]
let selected = null, follow = null;

const $ = (id) => document.getElementById(id);
const token = $("token");
token.value = sessionStorage.getItem("sase-token") || "";
token.addEventListener("change", () => sessionStorage.setItem("sase-token", token.value));

function headers(extra) {
  const h = Object.assign({}, extra);
  if (token.value) h.Authorization = "Bearer " + token.value;
  return h;
}

async function api(path, init) {
  init = init || {};
  init.headers = headers(init.headers);
  const r = await fetch(path, init);
  if (r.status === 401) throw new Error("401: enter the server's token");
  return r;
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c instanceof Node ? c : String(c));
  return e;
}

// record adds a count and returns the rates between samples.
function record(key, now, count) {
  const h = history.get(key) || [];
  h.push([now, count]);
  while (h.length && now - h[0][0] > KEEP_MS) h.shift();
  history.set(key, h);
  const rates = [];
  for (let i = 1; i < h.length; i++) {
    const dt = (h[i][0] - h[i - 1][0]) / 1000;
    rates.push(dt > 0 ? Math.max(0, h[i][1] - h[i - 1][1]) / dt : 0);
  }
  return rates;
}

// spark draws rates as a polyline, scaled to the largest, with the last
// rate as its title.
function spark(rates) {
  const W = 160, H = 28, NS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("class", "spark");
  svg.setAttribute("width", W);
  svg.setAttribute("height", H);
  const top = Math.max(1, ...rates);
  const n = KEEP_MS / POLL_MS;
  const pts = rates.map((r, i) => `${(W * (n - rates.length + i) / n).toFixed(1)},${(H - 2 - (H - 4) * r / top).toFixed(1)}`);
  const line = document.createElementNS(NS, "polyline");
  line.setAttribute("points", pts.join(" "));
  svg.append(line);
  const title = document.createElementNS(NS, "title");
  title.textContent = rates.length ? `${rates[rates.length - 1].toFixed(1)}/s now, peak ${top.toFixed(1)}/s` : "no rate yet";
  svg.append(title);
  return svg;
}

function num(v) { return el("td", {class: "num"}, v === undefined ? "" : v); }

async function poll() {
  try {
    const [streams, queries] = await Promise.all([
      api("api/streams").then((r) => r.json()),
      api("api/queries").then((r) => r.json()),
    ]);
    const now = Date.now();
    const sb = $("streams").tBodies[0];
    sb.replaceChildren(...streams.map((s) => {
      const live = s.live || {};
      const lag = s.unit && live.time !== undefined ? ((now - live.time * unitMs(s.unit)) / 1000).toFixed(1) + " s" : "";
      return el("tr", {}, el("td", {}, s.name), el("td", {}, s.kind), el("td", {class: "text"}, s.source),
        num(s.events), num(live.late), num(live.rejected), num(lag),
        el("td", {}, s.live ? spark(record("s:" + s.name, now, live.used)) : ""));
    }));
    const qb = $("queries").tBodies[0];
    qb.replaceChildren(...queries.map((q) => {
      const stop = el("button", {}, "stop");
      stop.disabled = q.state !== "running";
      stop.onclick = (ev) => { ev.stopPropagation(); api(`api/queries/${q.id}/stop`, {method: "POST"}).then(poll); };
      const tr = el("tr", {class: q.id === selected ? "selected" : ""}, num(q.id), el("td", {}, q.stream), el("td", {}, q.state),
        num(q.events), num(q.matches), el("td", {}, spark(record("q:" + q.id, now, q.matches))),
        el("td", {class: "text", title: q.text}, q.text), el("td", {}, stop));
      tr.onclick = () => select(q);
      return tr;
    }));
    $("status").textContent = `${streams.length} streams, ${queries.filter((q) => q.state === "running").length} queries running; updated ${new Date(now).toLocaleTimeString()}`;
  } catch (e) {
    $("status").textContent = String(e);
  }
}

// unitMs is a Go duration ("1ms", "1s", "1µs") in milliseconds.
function unitMs(u) {
  const m = /^([\d.]+)(ns|µs|us|ms|s|m|h)$/.exec(u);
  if (!m) return 1;
  return parseFloat(m[1]) * {ns: 1e-6, "µs": 1e-3, us: 1e-3, ms: 1, s: 1e3, m: 6e4, h: 3.6e6}[m[2]];
}

async function select(q) {
  selected = q.id;
  $("detail").hidden = false;
  $("detail-title").textContent = `Query ${q.id} on ${q.stream}`;
  api(`api/queries/${q.id}/explain`).then((r) => r.text()).then((t) => { $("plan").textContent = t; });
  $("matches").tBodies[0].replaceChildren();
  if (follow) follow.abort();
  follow = new AbortController();
  followMatches(q.id, follow.signal);
  poll();
}

// followMatches reads the query's Server-Sent Events with fetch (which
// can send the token, as EventSource cannot).
async function followMatches(id, signal) {
  const state = $("follow-state");
  state.textContent = "(connecting)";
  try {
    const r = await api(`api/queries/${id}/matches`, {signal});
    if (!r.ok) { state.textContent = `(${(await r.json()).errors[0].message})`; return; }
    // The server answers once it has the follower: no match is missed
    // from here on.
    state.textContent = "(following)";
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      buf += value;
      let end;
      while ((end = buf.indexOf("\n\n")) >= 0) {
        event(buf.slice(0, end), state);
        buf = buf.slice(end + 2);
      }
    }
  } catch (e) {
    if (!signal.aborted) state.textContent = `(${e})`;
  }
}

function event(text, state) {
  let name = "message", data = "";
  for (const line of text.split("\n")) {
    if (line.startsWith("event: ")) name = line.slice(7);
    else if (line.startsWith("data: ")) data += line.slice(6);
  }
  if (!data) return;
  if (name === "message") {
    const tb = $("matches").tBodies[0];
    tb.prepend(el("tr", {}, el("td", {}, new Date().toLocaleTimeString()), el("td", {}, data)));
    while (tb.rows.length > LATEST) tb.deleteRow(-1);
  } else if (name === "end") {
    state.textContent = `(the query has ${JSON.parse(data).state})`;
  } else if (name === "cutoff") {
    state.textContent = `(cut off: ${JSON.parse(data).reason})`;
  }
}

$("run").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const answer = $("answer");
  try {
    const r = await api("api/statements", {method: "POST", headers: {"Content-Type": "text/plain"}, body: $("stmt").value});
    const res = await r.json();
    answer.className = r.ok ? "" : "error";
    answer.textContent = (res.output || "") + (res.messages || "");
  } catch (e) {
    answer.className = "error";
    answer.textContent = String(e);
  }
  poll();
});

poll();
setInterval(poll, POLL_MS);
