// ludus-anim dashboard: sort any table by clicking a header (numbers by
// their data-v), filter the clip table. No network, no dependencies.
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
  function sortBy(table, th) {
    var i = th.cellIndex, numeric = th.getAttribute("data-type") === "num";
    var asc = th.getAttribute("aria-sort") !== "ascending";
    var heads = table.tHead.rows[0].cells;
    for (var h = 0; h < heads.length; h++) heads[h].removeAttribute("aria-sort");
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellKey(a, i, numeric), y = cellKey(b, i, numeric);
      var r = numeric ? x - y : (x < y ? -1 : x > y ? 1 : 0);
      return asc ? r : -r;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  function wireSorting() {
    var tables = document.querySelectorAll("table.sortable");
    Array.prototype.forEach.call(tables, function (t) {
      if (!t.tHead) return;
      Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th) {
        th.addEventListener("click", function () { sortBy(t, th); });
        th.addEventListener("keydown", function (e) {
          if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(t, th); }
        });
      });
    });
  }
  function wireFilter() {
    var table = document.getElementById("clip-table");
    if (!table) return;
    var text = document.getElementById("clip-filter"), prof = document.getElementById("profile-filter");
    var near = document.getElementById("near-filter"), warn = document.getElementById("warn-filter");
    var count = document.getElementById("clip-count");
    function apply() {
      var q = text.value.trim().toLowerCase(), p = prof.value, shown = 0;
      var rows = table.tBodies[0].rows;
      for (var i = 0; i < rows.length; i++) {
        var r = rows[i], ok = true;
        if (q && r.getAttribute("data-search").indexOf(q) < 0) ok = false;
        if (p && r.getAttribute("data-profile") !== p) ok = false;
        if (near.checked && parseFloat(r.getAttribute("data-budget")) < 0.9) ok = false;
        if (warn.checked && r.getAttribute("data-warn") === "0") ok = false;
        r.hidden = !ok;
        if (ok) shown++;
      }
      count.textContent = shown + " of " + rows.length + " clips";
    }
    [text, prof, near, warn].forEach(function (el) {
      el.addEventListener("input", apply);
      el.addEventListener("change", apply);
    });
    apply();
  }
  wireSorting();
  wireFilter();
})();
