// ghostdriver report: draws the per-ring timeline from the jobs embedded in #jobs-data.
"use strict";
(function () {
  var errors = [];
  function showError(msg) {
    errors.push(msg);
    var el = document.getElementById("errors");
    el.textContent = "Timeline error: " + errors.join("\n");
    el.hidden = false;
  }
  window.addEventListener("error", function (e) { showError(e.message); });

  var data = JSON.parse(document.getElementById("jobs-data").textContent);
  var canvas = document.getElementById("timeline");
  var ctx = canvas.getContext("2d");
  var tip = document.getElementById("tip");
  var stagePalette = ["#7aa6e0", "#b48ad1", "#d9822b", "#c23b3b", "#e0c341", "#5b7fd6", "#2e9d4f", "#e07aa6", "#6cc3c0", "#999999"];
  var tenantPalette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  var MAX_LANES = 32, LANE_H = 14, GAP = 3, HEADER_H = 18, AXIS_H = 22, LEFT = 130;
  var execIdx = data.stages.indexOf(data.execution_stage);

  function stageColor(i) {
    if (i === execIdx) return "#2e9d4f";
    return stagePalette[i % stagePalette.length];
  }

  // Lay out each ring once: hardware lanes (execution stages) and in-flight lanes (jobs).
  function pack(items, startOf, endOf) {
    var ends = [], lanes = [], overflow = 0;
    items.forEach(function (it) {
      var s = startOf(it), placed = false;
      for (var l = 0; l < ends.length; l++) {
        if (ends[l] <= s) { lanes[l].push(it); ends[l] = endOf(it); placed = true; break; }
      }
      if (!placed) {
        if (ends.length < MAX_LANES) { ends.push(endOf(it)); lanes.push([it]); }
        else { lanes[MAX_LANES - 1].push(it); overflow++; }
      }
    });
    return { lanes: lanes, overflow: overflow };
  }

  var drawn = 0, overflowed = 0, layout = [];
  data.rings.forEach(function (ring) {
    var jobs = ring.jobs.slice().sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
    var execs = [];
    jobs.forEach(function (j) {
      j[5].forEach(function (s) { if (s[0] === execIdx) execs.push({ job: j, s: s }); });
    });
    execs.sort(function (a, b) { return a.s[1] - b.s[1]; });
    var hw = pack(execs, function (e) { return e.s[1]; }, function (e) { return e.s[2]; });
    var fl = pack(jobs, function (j) { return j[0]; }, function (j) { return j[1]; });
    drawn += jobs.length;
    overflowed += hw.overflow + fl.overflow;
    layout.push({ name: ring.name, hw: hw.lanes.length ? hw.lanes : [[]], flight: fl.lanes });
  });

  var view = { t0: 0, t1: Math.max(data.extent, 1) };
  // report.html#view=T0,T1 opens the timeline on [T0, T1] (ns since the first job).
  var m = /view=(\d+),(\d+)/.exec(location.hash);
  if (m && +m[2] > +m[1]) { view.t0 = +m[1]; view.t1 = +m[2]; }
  var hits = [];

  function fmt(ns) {
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + " s";
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
    if (a >= 1e3) return (ns / 1e3).toFixed(1) + " µs";
    return ns + " ns";
  }

  // fmtTick prints an axis time in the unit of the tick step, with the decimals it needs.
  function fmtTick(ns, step) {
    var units = [[1e9, " s"], [1e6, " ms"], [1e3, " µs"], [1, " ns"]];
    for (var i = 0; i < units.length; i++) {
      if (step >= units[i][0] || i === units.length - 1) {
        var u = units[i][0], d = Math.max(0, Math.ceil(-Math.log10(step / u) - 1e-9));
        return (ns / u).toFixed(Math.min(d, 3)) + units[i][1];
      }
    }
  }

  function height() {
    var h = AXIS_H;
    layout.forEach(function (r) { h += HEADER_H + (r.hw.length + r.flight.length) * (LANE_H + GAP) + GAP; });
    return h;
  }

  function draw() {
    var dpr = window.devicePixelRatio || 1;
    var w = canvas.clientWidth || 800, h = height();
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    canvas.style.height = h + "px";
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    ctx.font = "11px sans-serif";
    var span = view.t1 - view.t0, plotW = Math.max(w - LEFT - 8, 10);
    function x(t) { return LEFT + (t - view.t0) / span * plotW; }
    hits = [];

    // Axis.
    var step = Math.pow(10, Math.floor(Math.log10(span / 6)));
    if (span / step > 12) step *= 5; else if (span / step > 6) step *= 2;
    ctx.fillStyle = "#555"; ctx.strokeStyle = "#eee";
    for (var t = Math.ceil(view.t0 / step) * step; t <= view.t1; t += step) {
      var px = x(t);
      ctx.beginPath(); ctx.moveTo(px, AXIS_H - 4); ctx.lineTo(px, h); ctx.stroke();
      ctx.fillText(fmtTick(t, step), px + 2, 12);
    }
    document.getElementById("view").textContent = "view " + fmt(view.t0) + " – " + fmt(view.t1) + " of " + fmt(data.extent);

    function bar(x0, x1, y, hh, color) {
      var a = Math.max(x0, LEFT), b = Math.min(x1, w);
      if (b < LEFT || a > w) return false;
      ctx.fillStyle = color;
      ctx.fillRect(a, y, Math.max(b - a, 1), hh);
      return true;
    }

    var y = AXIS_H;
    layout.forEach(function (r) {
      ctx.fillStyle = "#222"; ctx.font = "bold 12px sans-serif";
      ctx.fillText(r.name, 4, y + 13); ctx.font = "11px sans-serif";
      y += HEADER_H;
      r.hw.forEach(function (lane, li) {
        ctx.fillStyle = "#555"; ctx.fillText(li ? "hardware " + (li + 1) : "hardware", 12, y + 11);
        lane.forEach(function (e) {
          var x0 = x(e.s[1]), x1 = x(e.s[2]);
          if (bar(x0, x1, y, LANE_H - 3, "#2e9d4f")) {
            bar(x0, x1, y + LANE_H - 3, 3, tenantPalette[e.job[2] % tenantPalette.length]);
            hits.push({ x0: x0, x1: Math.max(x1, x0 + 1), y0: y, y1: y + LANE_H, job: e.job, stage: e.s });
          }
        });
        y += LANE_H + GAP;
      });
      r.flight.forEach(function (lane, li) {
        ctx.fillStyle = "#555"; ctx.fillText("in flight " + (li + 1), 12, y + 11);
        lane.forEach(function (j) {
          var x0 = x(j[0]), x1 = x(j[1]);
          if (!bar(x0, x1, y, LANE_H - 3, j[3] ? "#f3c4c4" : "#e6e6e6")) return;
          j[5].forEach(function (s) { bar(x(s[1]), x(s[2]), y, LANE_H - 3, stageColor(s[0])); });
          bar(x0, x1, y + LANE_H - 3, 3, tenantPalette[j[2] % tenantPalette.length]);
          hits.push({ x0: x0, x1: Math.max(x1, x0 + 1), y0: y, y1: y + LANE_H, job: j });
        });
        y += LANE_H + GAP;
      });
      y += GAP;
    });
  }

  function legend() {
    var el = document.getElementById("legend");
    data.stages.forEach(function (name, i) {
      var sw = document.createElement("span");
      sw.className = "sw"; sw.style.background = stageColor(i);
      el.appendChild(sw);
      el.appendChild(document.createTextNode(name + " (" + data.category_names[data.category[i]] + ")"));
    });
    var t = document.createElement("div");
    t.textContent = "tenants: ";
    data.tenants.forEach(function (name, i) {
      var sw = document.createElement("span");
      sw.className = "sw"; sw.style.background = tenantPalette[i % tenantPalette.length];
      t.appendChild(sw);
      t.appendChild(document.createTextNode(name));
    });
    el.appendChild(t);
  }

  function describe(h) {
    var j = h.job, lines = [];
    lines.push("job " + (j[4] || "(no fence)") + "  " + data.tenants[j[2]] + (j[3] ? "  [incomplete or evicted]" : ""));
    lines.push("in flight " + fmt(j[1] - j[0]) + "  (queued at " + fmt(j[0]) + ")");
    j[5].forEach(function (s) { lines.push("  " + data.stages[s[0]] + "  " + fmt(s[2] - s[1])); });
    return lines.join("\n");
  }

  // Zoom and pan.
  function zoom(factor, atX) {
    var w = canvas.clientWidth || 800, plotW = Math.max(w - LEFT - 8, 10);
    var span = view.t1 - view.t0;
    var at = view.t0 + Math.min(Math.max((atX - LEFT) / plotW, 0), 1) * span;
    var ns = Math.min(Math.max(span * factor, 1000), Math.max(data.extent, 1) * 4);
    view.t0 = at - (at - view.t0) * ns / span;
    view.t1 = view.t0 + ns;
    draw();
  }
  canvas.addEventListener("wheel", function (e) {
    e.preventDefault();
    zoom(e.deltaY > 0 ? 1.25 : 0.8, e.offsetX);
  }, { passive: false });
  var dragX = null;
  canvas.addEventListener("mousedown", function (e) { dragX = e.offsetX; });
  window.addEventListener("mouseup", function () { dragX = null; });
  canvas.addEventListener("mousemove", function (e) {
    if (dragX !== null) {
      var w = canvas.clientWidth || 800, plotW = Math.max(w - LEFT - 8, 10);
      var dt = (dragX - e.offsetX) / plotW * (view.t1 - view.t0);
      view.t0 += dt; view.t1 += dt; dragX = e.offsetX;
      draw();
      return;
    }
    var h = null;
    for (var i = hits.length - 1; i >= 0; i--) {
      var c = hits[i];
      if (e.offsetX >= c.x0 && e.offsetX <= c.x1 && e.offsetY >= c.y0 && e.offsetY <= c.y1) { h = c; break; }
    }
    if (!h) { tip.hidden = true; return; }
    tip.textContent = describe(h);
    tip.style.left = (e.offsetX + 12) + "px";
    tip.style.top = (e.offsetY + 12) + "px";
    tip.hidden = false;
  });
  canvas.addEventListener("mouseleave", function () { tip.hidden = true; });
  canvas.addEventListener("dblclick", function () { view.t0 = 0; view.t1 = Math.max(data.extent, 1); draw(); });
  document.getElementById("zoom-in").addEventListener("click", function () { zoom(0.5, LEFT + (canvas.clientWidth - LEFT) / 2); });
  document.getElementById("zoom-out").addEventListener("click", function () { zoom(2, LEFT + (canvas.clientWidth - LEFT) / 2); });
  document.getElementById("zoom-reset").addEventListener("click", function () { view.t0 = 0; view.t1 = Math.max(data.extent, 1); draw(); });
  window.addEventListener("resize", draw);

  legend();
  draw();
  var dj = document.getElementById("drawn-jobs");
  dj.textContent = String(drawn) + (overflowed ? " (" + overflowed + " in the last lane, overlapping: more than " + MAX_LANES + " at once)" : "");
  document.body.setAttribute("data-drawn-jobs", String(drawn));
})();
