// ludus-anim dashboard: sort any static table by clicking a header
// (numbers by their data-v); draw the clip table from the embedded data a
// page at a time (sort, filter, page); load a clip's detail fragment when
// the clip is opened, and start its stick-figure player (`player.js`,
// which the page includes before this script). No network, no
// dependencies.
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


  // Detail fragments: `DIR/<hash>.js` calls ludusDetails(hash, html).
  var loaded = {}, waiting = {};
  window.ludusDetails = function (key, html) {
    var slot = document.getElementById("detail-slot");
    if (!slot || loaded[key]) return;
    var div = document.createElement("div");
    div.setAttribute("data-fragment", key);
    div.innerHTML = html;
    slot.appendChild(div);
    window.ludusInitPlayers(div);
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
  window.ludusInitPlayers(document);
  openHash();
})();
