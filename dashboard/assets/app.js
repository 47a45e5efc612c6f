// ludus-anim dashboard: sort any static table by clicking a header
// (numbers by their data-v); draw the clip table from the embedded data a
// page at a time (sort, filter, page); load a clip's detail fragment when
// the clip is opened; play a clip's sampled poses as a stick figure. No
// network, no dependencies.
(function () {
  "use strict";
  function cellKey(row, i, numeric) {
    var c = row.cells[i];
    if (!c) return numeric ? -Infinity : "";
    if (numeric) {
      var v = parseFloat(c.getAttribute("data-v"));
      return isNaN(v) ? -Infinity : v;
    }
    return c.textContent.trim().toLowerCase();
  }
  function markSorted(table, th, asc) {
    var heads = table.tHead.rows[0].cells;
    for (var h = 0; h < heads.length; h++) heads[h].removeAttribute("aria-sort");
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
  }
  function sortBy(table, th) {
    var i = th.cellIndex, numeric = th.getAttribute("data-type") === "num";
    var asc = th.getAttribute("aria-sort") !== "ascending";
    markSorted(table, th, asc);
    var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellKey(a, i, numeric), y = cellKey(b, i, numeric);
      var r = numeric ? x - y : (x < y ? -1 : x > y ? 1 : 0);
      return asc ? r : -r;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  function onActivate(th, f) {
    th.addEventListener("click", f);
    th.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); f(); }
    });
  }
  function wireSorting() {
    var tables = document.querySelectorAll("table.sortable");
    Array.prototype.forEach.call(tables, function (t) {
      if (!t.tHead) return;
      Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th) {
        onActivate(th, function () { sortBy(t, th); });
      });
    });
  }

  var data = JSON.parse(document.getElementById("ludus-data").textContent);
  var col = {};
  data.cols.forEach(function (name, i) { col[name] = i; });

  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;" }[c];
    });
  }
  function int(n) { return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, " "); }
  function mm(m) { return (m * 1000).toFixed(4) + " mm"; }
  function fileName(p) { var i = p.lastIndexOf("/"); return i < 0 ? p : p.slice(i + 1); }
  function numCell(v, text) { return "<td class=\"n\" data-v=\"" + v + "\">" + esc(text) + "</td>"; }
  function budgetCell(r) {
    var cls = r > 1 ? "over" : r >= 0.9 ? "near" : "ok";
    var text = r > 1e30 ? "inf" : (r * 100).toFixed(1) + "%";
    return "<td class=\"n " + cls + "\" data-v=\"" + r + "\">" + text + "</td>";
  }
  var FORMAT = {
    joints: function (v) { return numCell(v, String(v)); },
    duration_s: function (v) { return numCell(v, v.toFixed(2)); },
    raw_bytes: function (v) { return numCell(v, int(v)); },
    compressed_bytes: function (v) { return numCell(v, int(v)); },
    ratio: function (v) { return numCell(v, v.toFixed(1) + ":1"); },
    max_error_m: function (v) { return numCell(v, mm(v)); },
    p99_error_m: function (v) { return numCell(v, mm(v)); },
    budget: budgetCell,
    decode_ns: function (v) { return numCell(v, v.toFixed(0)); },
    compress_ms: function (v) { return numCell(v, v.toFixed(1)); },
    warnings: function (v) { return numCell(v, String(v)); },
    change: function (v) { return "<td class=\"change " + v + "\">" + v + "</td>"; }
  };
  function rowHtml(row, keys) {
    var source = data.assets[row[col.asset]][0];
    var out = "<tr data-id=\"" + esc(row[col.id]) + "\">";
    keys.forEach(function (k) {
      var v = row[col[k]];
      if (k === "clip") {
        out += "<td><a href=\"#" + esc(row[col.id]) + "\" title=\"" + esc(source) + "\">" + esc(v) +
          "</a> <span class=\"muted\">" + esc(fileName(source)) + "</span></td>";
      } else if (k === "worst_joint") {
        out += "<td>" + esc(v) + " <span class=\"muted\">@" + row[col.worst_time_s].toFixed(2) + "s</span></td>";
      } else if (FORMAT[k]) {
        out += FORMAT[k](v);
      } else {
        out += "<td>" + esc(v) + "</td>";
      }
    });
    return out + "</tr>";
  }

  function wireClipTable() {
    var table = document.getElementById("clip-table");
    if (!table) return;
    var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var keys = heads.map(function (th) { return th.getAttribute("data-key"); });
    var perPage = parseInt(table.getAttribute("data-page-rows"), 10) || 100;
    var search = data.rows.map(function (r) {
      return (data.assets[r[col.asset]][0] + " " + r[col.clip] + " " + r[col.profile] + " " + r[col.worst_joint]).toLowerCase();
    });
    var order = data.rows.map(function (_, i) { return i; });
    var state = { shown: order, page: 0 };
    var text = document.getElementById("clip-filter"), prof = document.getElementById("profile-filter");
    var near = document.getElementById("near-filter"), warn = document.getElementById("warn-filter");
    var count = document.getElementById("clip-count");
    var pagers = document.querySelectorAll("#clips .pager");
    function draw() {
      var pages = Math.max(1, Math.ceil(state.shown.length / perPage));
      state.page = Math.min(Math.max(0, state.page), pages - 1);
      var start = state.page * perPage, html = "";
      state.shown.slice(start, start + perPage).forEach(function (i) { html += rowHtml(data.rows[i], keys); });
      table.tBodies[0].innerHTML = html;
      count.textContent = state.shown.length + " of " + data.rows.length + " clips";
      Array.prototype.forEach.call(pagers, function (p) {
        p.querySelector(".page-label").textContent = "page " + (state.page + 1) + " of " + pages;
        p.hidden = pages < 2;
      });
    }
    function filter() {
      var q = text.value.trim().toLowerCase(), p = prof.value;
      state.shown = order.filter(function (i) {
        var r = data.rows[i];
        if (q && search[i].indexOf(q) < 0) return false;
        if (p && r[col.profile] !== p) return false;
        if (near.checked && r[col.budget] < 0.9) return false;
        if (warn.checked && r[col.warnings] === 0) return false;
        return true;
      });
      state.page = 0;
      draw();
    }
    heads.forEach(function (th) {
      onActivate(th, function () {
        var k = col[th.getAttribute("data-key")], numeric = th.getAttribute("data-type") === "num";
        var asc = th.getAttribute("aria-sort") !== "ascending";
        markSorted(table, th, asc);
        order.sort(function (a, b) {
          var x = data.rows[a][k], y = data.rows[b][k];
          if (!numeric) { x = String(x).toLowerCase(); y = String(y).toLowerCase(); }
          var r = x < y ? -1 : x > y ? 1 : a - b;
          return asc ? r : -r;
        });
        filter();
      });
    });
    [text, prof, near, warn].forEach(function (el) {
      el.addEventListener("input", filter);
      el.addEventListener("change", filter);
    });
    Array.prototype.forEach.call(document.querySelectorAll("#clips .pager button"), function (b) {
      b.addEventListener("click", function () {
        var to = b.getAttribute("data-page");
        state.page = to === "first" ? 0 : to === "last" ? Infinity : state.page + (to === "next" ? 1 : -1);
        draw();
      });
    });
    filter();
  }


  // Stick-figure players (`figure[data-player]`, section player.rs): the
  // sidecar's sampled poses, u16 per axis within the clip's box
  // (position = origin + q * step), decoded here; side view (z, y), top
  // view (x, z) with the root trajectory, timeline with events, markers
  // and contacts. A retargeted clip's source is drawn beside the result
  // on the same clock.
  function bytesOf(b64) {
    var s = atob(b64 || ""), b = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) b[i] = s.charCodeAt(i);
    return new DataView(b.buffer);
  }
  function f32s(b64) {
    var v = bytesOf(b64), n = v.byteLength >> 2, out = new Float32Array(n);
    for (var i = 0; i < n; i++) out[i] = v.getFloat32(i * 4, true);
    return out;
  }
  function decodePoses(p) {
    var v = bytesOf(p.q), n = v.byteLength >> 1, out = new Float32Array(n);
    for (var i = 0; i < n; i++) out[i] = p.origin[i % 3] + v.getUint16(i * 2, true) * p.step[i % 3];
    return out;
  }
  var COLORS = ["#0072b2", "#d55e00"];
  var players = window.ludusPlayers = [];
  function makePlayer(el) {
    var d = JSON.parse(el.querySelector(".player-data").textContent);
    var dur = Math.max(d.duration, 1e-6), traj = null;
    if (d.trajectory) {
      traj = { rate: d.trajectory.rate, x: f32s(d.trajectory.x), z: f32s(d.trajectory.z), yaw: f32s(d.trajectory.yaw) };
    }
    function trajAt(t) {
      if (!traj || !traj.x.length) return null;
      var f = Math.min(Math.max(t * traj.rate, 0), traj.x.length - 1), i = Math.floor(f), j = Math.min(i + 1, traj.x.length - 1), a = f - i;
      return { x: traj.x[i] + (traj.x[j] - traj.x[i]) * a, z: traj.z[i] + (traj.z[j] - traj.z[i]) * a, yaw: traj.yaw[i] + (traj.yaw[j] - traj.yaw[i]) * a };
    }
    var views = el.querySelector(".player-views");
    var figs = d.figures.map(function (f, k) {
      var fig = { parents: f.parents, n: f.parents.length, rate: f.poses.rate, frames: f.poses.frames,
                  pos: decodePoses(f.poses), color: COLORS[k % COLORS.length], world: k === 0 && !!traj };
      var panel = document.createElement("div");
      panel.className = "player-panel";
      panel.innerHTML = (f.label ? "<div class=\"player-label\" style=\"color:" + fig.color + "\">" + esc(f.label) + "</div>" : "") +
        "<canvas class=\"pl-side\" width=\"300\" height=\"240\" aria-label=\"side view\"></canvas>" +
        "<canvas class=\"pl-top\" width=\"300\" height=\"240\" aria-label=\"top view\"></canvas>";
      views.appendChild(panel);
      fig.side = panel.querySelector(".pl-side");
      fig.top = panel.querySelector(".pl-top");
      return fig;
    });
    // Joint j of figure g at time t: [x, y, z], interpolated between frames;
    // the result's top view in the world (trajectory applied).
    function pose(g, t) {
      var f = Math.min(Math.max(t * g.rate, 0), g.frames - 1), i = Math.floor(f), j = Math.min(i + 1, g.frames - 1), a = f - i;
      var out = new Float32Array(g.n * 3), A = i * g.n * 3, B = j * g.n * 3;
      for (var k = 0; k < g.n * 3; k++) out[k] = g.pos[A + k] + (g.pos[B + k] - g.pos[A + k]) * a;
      return out;
    }
    function toWorld(p, r) {
      if (!r) return p;
      var c = Math.cos(r.yaw), s = Math.sin(r.yaw), out = new Float32Array(p.length);
      for (var k = 0; k < p.length; k += 3) {
        out[k] = c * p[k] + s * p[k + 2] + r.x; out[k + 1] = p[k + 1]; out[k + 2] = -s * p[k] + c * p[k + 2] + r.z;
      }
      return out;
    }
    // Bounds over every frame, per view, each figure scaled to its own
    // (a retarget's source and result are different rigs, often of
    // different sizes, and each must be readable); the
    // side view follows the first joint along z (a source that walks off
    // stays in view; a result's root, its motion extracted, stays put).
    var bounds = figs.map(function (g) {
      var b = { side: [Infinity, Infinity, -Infinity, -Infinity], top: [Infinity, Infinity, -Infinity, -Infinity] };
      function add(bb, h, v) { bb[0] = Math.min(bb[0], h); bb[1] = Math.min(bb[1], v); bb[2] = Math.max(bb[2], h); bb[3] = Math.max(bb[3], v); }
      for (var f = 0; f < g.frames; f++) {
        var t = f / g.rate, p = pose(g, t), w = g.world ? toWorld(p, trajAt(t)) : p;
        for (var k = 0; k < p.length; k += 3) { add(b.side, p[k + 2] - p[2], p[k + 1]); add(b.top, w[k], w[k + 2]); }
      }
      if (g.world) for (var i = 0; i < traj.x.length; i++) add(b.top, traj.x[i], traj.z[i]);
      return b;
    });
    function fit(bb, canvas) {
      var w = Math.max(bb[2] - bb[0], 0.05), h = Math.max(bb[3] - bb[1], 0.05);
      return Math.min((canvas.width - 24) / w, (canvas.height - 24) / h);
    }
    figs.forEach(function (g, k) {
      g.sideScale = fit(bounds[k].side, g.side);
      g.topScale = fit(bounds[k].top, g.top);
    });
    function project(bb, scale, canvas, h, v, flip) {
      var cx = (bb[0] + bb[2]) / 2, cy = (bb[1] + bb[3]) / 2;
      return [canvas.width / 2 + (h - cx) * scale, canvas.height / 2 + (flip ? -1 : 1) * (v - cy) * scale];
    }
    function clear(ctx, c, title) {
      ctx.fillStyle = "#fbfbfc"; ctx.fillRect(0, 0, c.width, c.height);
      ctx.strokeStyle = "#d9d9de"; ctx.strokeRect(0.5, 0.5, c.width - 1, c.height - 1);
      ctx.fillStyle = "#6b6b70"; ctx.font = "11px sans-serif"; ctx.fillText(title, 6, 14);
    }
    function bones(ctx, g, p, map) {
      ctx.strokeStyle = g.color; ctx.lineWidth = 2; ctx.beginPath();
      for (var j = 0; j < g.n; j++) {
        var q = g.parents[j];
        if (q < 0) continue;
        var a = map(p, q), b = map(p, j);
        ctx.moveTo(a[0], a[1]); ctx.lineTo(b[0], b[1]);
      }
      ctx.stroke();
      ctx.fillStyle = g.color;
      for (var k = 0; k < g.n; k++) { var c = map(p, k); ctx.fillRect(c[0] - 1.5, c[1] - 1.5, 3, 3); }
    }
    var tl = el.querySelector(".player-timeline");
    function drawTimeline(t) {
      var ctx = tl.getContext("2d"), W = tl.width, H = tl.height, x = function (s) { return 4 + (W - 8) * s / dur; };
      ctx.fillStyle = "#fbfbfc"; ctx.fillRect(0, 0, W, H);
      var rows = Math.max(d.contacts.length, 1), rh = (H - 18) / rows;
      d.contacts.forEach(function (c, i) {
        ctx.fillStyle = "rgba(0,158,115,0.35)";
        c.spans.forEach(function (sp) { ctx.fillRect(x(sp[0]), 14 + i * rh, Math.max(x(sp[1]) - x(sp[0]), 1), rh - 2); });
        ctx.fillStyle = "#4a4a50"; ctx.font = "9px sans-serif"; ctx.fillText(c.joint, 6, 14 + i * rh + rh / 2 + 3);
      });
      d.events.forEach(function (e) {
        ctx.fillStyle = e[2] === "event" ? "#e69f00" : "#cc79a7";
        ctx.fillRect(x(e[0]) - 1, 0, 2, 12);
      });
      ctx.strokeStyle = "#d9d9de"; ctx.strokeRect(0.5, 0.5, W - 1, H - 1);
      ctx.strokeStyle = "#b00020"; ctx.lineWidth = 2; ctx.beginPath(); ctx.moveTo(x(t), 0); ctx.lineTo(x(t), H); ctx.stroke();
    }
    var state = { t: 0, playing: false, speed: 1, last: 0, drawn: 0 };
    var scrub = el.querySelector(".pl-scrub"), label = el.querySelector(".pl-time"), btn = el.querySelector(".pl-play");
    function draw() {
      var t = state.t;
      figs.forEach(function (g, k) {
        var p = pose(g, t), b = bounds[k], r = g.world ? trajAt(t) : null, w = toWorld(p, r);
        var ctx = g.side.getContext("2d");
        clear(ctx, g.side, "side");
        var gy = project(b.side, g.sideScale, g.side, 0, 0, true)[1];
        ctx.strokeStyle = "#c8c8ce"; ctx.lineWidth = 1; ctx.beginPath(); ctx.moveTo(0, gy); ctx.lineTo(g.side.width, gy); ctx.stroke();
        bones(ctx, g, p, function (p, j) { return project(b.side, g.sideScale, g.side, p[j * 3 + 2] - p[2], p[j * 3 + 1], true); });
        ctx = g.top.getContext("2d");
        clear(ctx, g.top, g.world ? "top, root trajectory" : "top");
        var mapTop = function (p, j) { return project(b.top, g.topScale, g.top, p[j * 3], p[j * 3 + 2], true); };
        if (g.world) {
          ctx.strokeStyle = "#56b4e9"; ctx.lineWidth = 1.5; ctx.beginPath();
          for (var i = 0; i < traj.x.length; i++) {
            var c = project(b.top, g.topScale, g.top, traj.x[i], traj.z[i], true);
            if (i) ctx.lineTo(c[0], c[1]); else ctx.moveTo(c[0], c[1]);
          }
          ctx.stroke();
        }
        bones(ctx, g, w, mapTop);
      });
      drawTimeline(t);
      scrub.value = String(Math.round(1000 * t / dur));
      label.textContent = t.toFixed(2) + " / " + dur.toFixed(2) + " s";
      state.drawn++;
      el.setAttribute("data-drawn", String(state.drawn));
    }
    function tick(now) {
      if (!state.playing) return;
      if (state.last) state.t = (state.t + (now - state.last) / 1000 * state.speed) % dur;
      state.last = now;
      draw();
      requestAnimationFrame(tick);
    }
    function seek(t) { state.t = Math.min(Math.max(t, 0), dur); draw(); }
    btn.addEventListener("click", function () {
      state.playing = !state.playing; state.last = 0;
      btn.textContent = state.playing ? "Pause" : "Play";
      if (state.playing) requestAnimationFrame(tick);
    });
    scrub.addEventListener("input", function () { seek(scrub.value / 1000 * dur); });
    el.querySelector(".pl-speed").addEventListener("change", function (e) { state.speed = parseFloat(e.target.value) || 1; });
    tl.addEventListener("click", function (e) {
      var r = tl.getBoundingClientRect();
      seek((e.clientX - r.left) / r.width * dur);
    });
    draw();
    var api = { el: el, seek: seek, state: state, figures: figs.length };
    players.push(api);
    return api;
  }
  function initPlayers(root) {
    Array.prototype.forEach.call(root.querySelectorAll("figure[data-player]:not([data-ready])"), function (el) {
      el.setAttribute("data-ready", "1");
      try { makePlayer(el); } catch (e) { el.setAttribute("data-error", String(e)); throw e; }
    });
  }

  // Detail fragments: `DIR/<hash>.js` calls ludusDetails(hash, html).
  var loaded = {}, waiting = {};
  window.ludusDetails = function (key, html) {
    var slot = document.getElementById("detail-slot");
    if (!slot || loaded[key]) return;
    var div = document.createElement("div");
    div.setAttribute("data-fragment", key);
    div.innerHTML = html;
    slot.appendChild(div);
    initPlayers(div);
    loaded[key] = true;
    var hint = document.getElementById("detail-hint");
    if (hint) hint.hidden = true;
    (waiting[key] || []).forEach(function (f) { f(); });
    delete waiting[key];
  };
  var rowById = null;
  function fragmentOf(id) {
    if (!rowById) {
      rowById = {};
      data.rows.forEach(function (r) { rowById[r[col.id]] = r; });
    }
    var r = rowById[id];
    return r ? data.assets[r[col.asset]][1] : "";
  }
  function reveal(id) {
    var el = document.getElementById(id);
    if (el) el.scrollIntoView();
    return !!el;
  }
  function openHash() {
    var id = decodeURIComponent(location.hash.slice(1));
    if (!id || reveal(id) || id.indexOf("clip-") !== 0 || !data.details) return;
    var key = fragmentOf(id);
    if (!key || loaded[key]) return;
    if (!waiting[key]) {
      waiting[key] = [];
      var s = document.createElement("script");
      s.src = data.details + "/" + key + ".js";
      s.onerror = function () {
        var hint = document.getElementById("detail-hint");
        if (hint) { hint.hidden = false; hint.textContent = "Could not load " + s.src + " (the page's detail folder must stay beside it)."; }
      };
      document.body.appendChild(s);
    }
    waiting[key].push(function () { reveal(id); });
  }
  window.addEventListener("hashchange", openHash);
  wireSorting();
  wireClipTable();
  initPlayers(document);
  openHash();
})();
