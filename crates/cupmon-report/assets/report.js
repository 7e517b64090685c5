// cupmon report: draws the charts from the JSON in #report-data as SVG, one time
// axis for all of them (drag to zoom, double-click to zoom out), and shows the
// page's instants in local time. No library, no network.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("report-data").textContent);
  const NS = "http://www.w3.org/2000/svg";
  const COLORS = ["#3b6fd6", "#d9622b", "#2e9f5b", "#9c4fc4", "#c0192b", "#1c9aa8",
    "#b58900", "#6b6f7a", "#e377c2", "#5c3c1e"];
  const T0 = D.t0_ms + D.t0_frac_ms;
  const full = [0, Math.max(D.span_ms, 1e-6)];
  let view = full.slice();
  const charts = [];

  const pad2 = (n) => String(n).padStart(2, "0");
  function clock(ms, withMs) {
    const d = new Date(ms);
    let s = pad2(d.getHours()) + ":" + pad2(d.getMinutes()) + ":" + pad2(d.getSeconds());
    if (withMs) s += "." + String(d.getMilliseconds()).padStart(3, "0");
    return s;
  }
  function dateTime(ms) {
    const d = new Date(ms);
    return d.getFullYear() + "-" + pad2(d.getMonth() + 1) + "-" + pad2(d.getDate()) + " " + clock(ms, true);
  }
  for (const el of document.querySelectorAll("time[data-ms]")) {
    el.title = el.textContent;
    el.textContent = dateTime(Number(el.dataset.ms));
  }

  function fmtNum(v) {
    const a = Math.abs(v);
    if (a >= 1e12) return (v / 1e12).toFixed(1) + "T";
    if (a >= 1e9) return (v / 1e9).toFixed(1) + "G";
    if (a >= 1e6) return (v / 1e6).toFixed(1) + "M";
    if (a >= 1e3) return (v / 1e3).toFixed(1) + "k";
    return a >= 10 || v === 0 ? v.toFixed(0) : v.toFixed(1);
  }
  const fmtPct = (v) => v.toFixed(1) + "%";
  const fmtBytes = (v) => fmtNum(v) + "B/s";
  const fmtRate = (v) => fmtNum(v) + "/s";

  const STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4,
    12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 108e5, 216e5, 432e5, 864e5];
  function ticks(a, b, width) {
    const want = Math.max(2, Math.floor(width / 110));
    const span = b - a;
    let step = STEPS.find((s) => span / s <= want) || 864e5 * Math.ceil(span / want / 864e5);
    if (span / step < 1) step = span;
    const tz = new Date(T0 + a).getTimezoneOffset() * 6e4;
    const local = (t) => T0 + t - tz;
    const out = [];
    let t = Math.ceil(local(a) / step) * step - (T0 - tz);
    for (; t <= b && out.length < 50; t += step) out.push(t);
    return { list: out, ms: step < 1e3 };
  }

  function el(name, attrs, parent) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  const root = document.getElementById("charts");
  const tip = document.createElement("div");
  tip.id = "tooltip";
  document.body.appendChild(tip);

  function chart(title, series, fmt, fixedMax, strip) {
    if (!series.length) return;
    const box = document.createElement("div");
    box.className = "chart";
    const h = document.createElement("h3");
    h.textContent = title;
    box.appendChild(h);
    const svg = el("svg", { height: strip ? 70 : 170, "data-series": series.length });
    box.appendChild(svg);
    const legend = document.createElement("div");
    legend.className = "legend";
    for (const s of series) {
      const sp = document.createElement("span");
      const i = document.createElement("i");
      i.style.background = color(s);
      sp.appendChild(i);
      sp.appendChild(document.createTextNode(s.name));
      legend.appendChild(sp);
    }
    box.appendChild(legend);
    root.appendChild(box);
    const c = { svg, series, fmt, fixedMax, title, strip: !!strip };
    charts.push(c);
    interact(c);
  }
  const color = (s) => COLORS[(s.color !== undefined ? s.color : s.p) % COLORS.length];

  const M = { l: 72, r: 14, t: 8, b: 22 };
  function geometry(c) {
    const w = Math.max(300, c.svg.clientWidth || root.clientWidth || 900);
    const h = c.strip ? 70 : 170;
    const x = (t) => M.l + ((t - view[0]) / (view[1] - view[0])) * (w - M.l - M.r);
    return { w, h, x };
  }

  function draw(c) {
    const svg = c.svg;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const { w, h, x } = geometry(c);
    svg.setAttribute("viewBox", "0 0 " + w + " " + h);
    const first = Math.max(0, Math.floor(view[0] / D.bin_ms));
    const last = Math.min(D.bins, Math.ceil(view[1] / D.bin_ms));
    let max = c.fixedMax || 0;
    if (!c.fixedMax) {
      for (const s of c.series) for (let i = first; i < last; i++) max = Math.max(max, s.v[i]);
      max = max > 0 ? max * 1.08 : 1;
    }
    const y = (v) => h - M.b - (v / max) * (h - M.t - M.b);
    const grid = el("g", { class: "grid axis" }, svg);
    for (let k = 0; k <= (c.strip ? -1 : 4); k++) {
      const v = (max * k) / 4;
      el("line", { x1: M.l, x2: w - M.r, y1: y(v), y2: y(v) }, grid);
      const t = el("text", { x: M.l - 6, y: y(v) + 4, "text-anchor": "end" }, grid);
      t.textContent = c.fmt(v);
    }
    const tk = ticks(view[0], view[1], w);
    for (const t of tk.list) {
      el("line", { x1: x(t), x2: x(t), y1: h - M.b, y2: h - M.b + 4 }, grid);
      const lab = el("text", { x: x(t), y: h - 6, "text-anchor": "middle" }, grid);
      lab.textContent = clock(T0 + t, tk.ms);
    }
    const clip = "clip" + charts.indexOf(c);
    const cp = el("clipPath", { id: clip }, svg);
    el("rect", { x: M.l, y: 0, width: w - M.l - M.r, height: h }, cp);
    const body = el("g", { "clip-path": "url(#" + clip + ")" }, svg);
    if (D.slowest) {
      const r = el("rect", { class: "slowest", x: x(D.slowest.a), y: M.t,
        width: Math.max(1, x(D.slowest.b) - x(D.slowest.a)), height: h - M.t - M.b }, body);
      el("title", {}, r).textContent = "the slowest period (see Next)";
    }
    for (const win of D.windows) {
      const a = el("a", { href: win.href }, body);
      const r = el("rect", { class: "window", x: x(win.a), y: M.t,
        width: Math.max(2, x(win.b) - x(win.a)), height: h - M.t - M.b }, a);
      el("title", {}, r).textContent = win.name + " (open its trace)";
    }
    if (c.strip) {
      const pw = D.period_ms;
      D.slowest_rank.forEach((p, i) => {
        if (p < 0) return;
        const r = el("rect", { class: "straggler", x: x(i * pw), y: M.t,
          width: Math.max(1, x((i + 1) * pw) - x(i * pw) - 1), height: h - M.t - M.b,
          fill: COLORS[p % COLORS.length] }, body);
        el("title", {}, r).textContent = D.processes[p];
      });
    }
    const step = Math.max(1, Math.floor((last - first) / (w * 2)));
    for (const s of c.strip ? [] : c.series) {
      let d = "";
      for (let i = first; i < last; i += step) {
        let v = s.v[i];
        for (let j = i + 1; j < Math.min(i + step, last); j++) v = Math.max(v, s.v[j]);
        const t = Math.min((i + 0.5 * step) * D.bin_ms, D.span_ms);
        d += (d ? "L" : "M") + x(t).toFixed(1) + "," + y(v).toFixed(1);
      }
      if (d) el("path", { class: "series", d, stroke: color(s) }, body);
    }
    c.geom = { w, h, x };
  }

  function redraw() {
    for (const c of charts) draw(c);
  }

  function interact(c) {
    let start = null;
    let sel = null;
    const tAt = (ev) => {
      const r = c.svg.getBoundingClientRect();
      const { w } = c.geom || geometry(c);
      const px = ((ev.clientX - r.left) / r.width) * w;
      return view[0] + ((px - M.l) / (w - M.l - M.r)) * (view[1] - view[0]);
    };
    c.svg.addEventListener("mousedown", (ev) => {
      if (ev.button !== 0 || ev.target.closest("a")) return;
      start = tAt(ev);
      ev.preventDefault();
    });
    window.addEventListener("mouseup", (ev) => {
      if (start === null) return;
      const end = tAt(ev);
      const a = Math.max(full[0], Math.min(start, end));
      const b = Math.min(full[1], Math.max(start, end));
      start = null;
      if (sel) sel.remove();
      sel = null;
      if (b - a > (view[1] - view[0]) / 200 && b - a >= Math.min(D.bin_ms, full[1]) / 4) {
        view = [a, b];
        redraw();
      }
    });
    c.svg.addEventListener("dblclick", () => {
      view = full.slice();
      redraw();
    });
    c.svg.addEventListener("mousemove", (ev) => {
      const t = tAt(ev);
      if (start !== null) {
        const { x, h } = c.geom;
        if (!sel) sel = el("rect", { class: "select", y: M.t, height: h - M.t - M.b }, c.svg);
        sel.setAttribute("x", Math.min(x(start), x(t)));
        sel.setAttribute("width", Math.abs(x(t) - x(start)));
      }
      const i = Math.floor(t / D.bin_ms);
      if (i < 0 || i >= D.bins || t > view[1]) {
        tip.style.display = "none";
        return;
      }
      let text = dateTime(T0 + i * D.bin_ms);
      if (c.strip) {
        const p = D.slowest_rank[Math.floor(t / D.period_ms)];
        text += "\nslowest: " + (p >= 0 ? D.processes[p] : "-");
      } else {
        for (const s of c.series) text += "\n" + s.name + ": " + c.fmt(s.v[i]);
      }
      tip.textContent = text;
      tip.style.display = "block";
      tip.style.left = ev.pageX + 14 + "px";
      tip.style.top = ev.pageY + 10 + "px";
    });
    c.svg.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  }

  chart("GPU busy % (per device)", D.busy, fmtPct, 100);
  chart("kernels per second", D.kernels, fmtRate);
  chart("copy bandwidth (memcpy bytes per second)", D.copies, fmtBytes);
  chart("time in NCCL kernels % (mean over the process's devices)", D.nccl, fmtPct, 100);
  if (D.slowest_rank) {
    chart("slowest rank per " + (D.period_ms === 6e4 ? "minute" : (D.period_ms / 1e3) + " s"),
      D.processes.map((name, p) => ({ name, p, v: [] })), () => "", 1, true);
  }
  redraw();
  let pending = 0;
  window.addEventListener("resize", () => {
    clearTimeout(pending);
    pending = setTimeout(redraw, 100);
  });
  document.body.dataset.chartsReady = String(charts.length);
})();
