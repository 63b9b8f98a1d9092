// The session index: sort by clicking a column header, filter with the search box.
// Without JavaScript the table reads the same, unsorted by hand and unfiltered.
(function () {
  "use strict";
  var table = document.getElementById("sessions");
  if (!table) { return; }
  var body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;
  function cellValue(row, i, kind) {
    var cell = row.cells[i];
    if (!cell) { return kind === "num" ? -1 : ""; }
    var v = cell.hasAttribute("data-v") ? cell.getAttribute("data-v") : cell.textContent.trim();
    if (kind === "num") { var n = parseFloat(v); return isNaN(n) ? -1 : n; }
    return v.toLowerCase();
  }
  function sortBy(i) {
    var th = heads[i];
    var kind = th.getAttribute("data-kind");
    var dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
    for (var k = 0; k < heads.length; k++) { heads[k].removeAttribute("aria-sort"); }
    th.setAttribute("aria-sort", dir);
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, i, kind), y = cellValue(b, i, kind);
      var c = x < y ? -1 : x > y ? 1 : 0;
      return dir === "ascending" ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  Array.prototype.forEach.call(heads, function (th, i) {
    var b = document.createElement("button");
    b.type = "button";
    b.textContent = th.textContent;
    th.textContent = "";
    th.appendChild(b);
    b.addEventListener("click", function () { sortBy(i); });
  });
  var tools = document.getElementById("tools");
  var input = document.getElementById("filter");
  var shown = document.getElementById("shown");
  function filter() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var n = 0;
    Array.prototype.forEach.call(body.rows, function (r) {
      var text = r.textContent.toLowerCase();
      var keep = words.every(function (w) { return text.indexOf(w) !== -1; });
      r.hidden = !keep;
      if (keep) { n++; }
    });
    shown.textContent = words.length ? n + " shown" : "";
  }
  if (tools && input) {
    tools.hidden = false;
    input.addEventListener("input", filter);
  }
})();
