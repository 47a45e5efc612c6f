// ludus-anim stick-figure player, shared by the dashboard's clip details
// and the standalone retarget preview pages (`retarget preview`): every
// `figure[data-player]` under a root, drawn from its embedded JSON.
// Defines window.ludusInitPlayers(root) and window.ludusPlayers. No
// network, no dependencies.
(function () {
  "use strict";
  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;" }[c];
    });
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
    // A rig's up and forward axes (`["+z", "-y"]`) turned to +y up and
    // +z forward (right = up x forward becomes +x), in place; absent or
    // unusable axes leave the positions as stored.
    function axis(s) {
      var v = [0, 0, 0], i = "xyz".indexOf((s || "").charAt(1));
      if (i < 0) return null;
      v[i] = s.charAt(0) === "-" ? -1 : 1;
      return v;
    }
    function standUp(pos, axes) {
      var u = axes && axis(axes[0]), f = axes && axis(axes[1]);
      if (!u || !f || u[0] * f[0] + u[1] * f[1] + u[2] * f[2] !== 0) return;
      if (u[1] === 1 && f[2] === 1) return;
      var r = [u[1] * f[2] - u[2] * f[1], u[2] * f[0] - u[0] * f[2], u[0] * f[1] - u[1] * f[0]];
      for (var k = 0; k < pos.length; k += 3) {
        var x = pos[k], y = pos[k + 1], z = pos[k + 2];
        pos[k] = r[0] * x + r[1] * y + r[2] * z;
        pos[k + 1] = u[0] * x + u[1] * y + u[2] * z;
        pos[k + 2] = f[0] * x + f[1] * y + f[2] * z;
      }
    }
    var views = el.querySelector(".player-views");
    var figs = d.figures.map(function (f, k) {
      var fig = { parents: f.parents, n: f.parents.length, rate: f.poses.rate, frames: f.poses.frames,
                  pos: decodePoses(f.poses), color: COLORS[k % COLORS.length], world: k === 0 && !!traj };
      standUp(fig.pos, f.axes);
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
  window.ludusInitPlayers = function (root) {
    Array.prototype.forEach.call(root.querySelectorAll("figure[data-player]:not([data-ready])"), function (el) {
      el.setAttribute("data-ready", "1");
      try { makePlayer(el); } catch (e) { el.setAttribute("data-error", String(e)); throw e; }
    });
  };
})();
