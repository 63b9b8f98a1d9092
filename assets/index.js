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
  function val(id) { var e = document.getElementById(id); return e ? e.value : ""; }
  // The table's filters: text, harness, project, start day and status, all at once.
  function filter() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var h = val("f-harness"), p = val("f-project"), from = val("f-from"), to = val("f-to");
    var st = val("f-status");
    var n = 0, any = words.length || h || p || from || to || st;
    Array.prototype.forEach.call(body.rows, function (r) {
      var text = r.textContent.toLowerCase(), d = r.getAttribute("data-day") || "";
      var keep = words.every(function (w) { return text.indexOf(w) !== -1; }) &&
        (!h || r.getAttribute("data-harness") === h) &&
        (!p || r.getAttribute("data-project") === p) &&
        (!from || (d && d >= from)) && (!to || (d && d <= to)) &&
        (!st || r.getAttribute("data-status") === st);
      r.hidden = !keep;
      if (keep) { n++; }
    });
    shown.textContent = any ? n + " shown" : "";
  }
  // The search: every turn of every session, by the words of its prompt, messages, commands
  // and response (each query word the start of one of them), read from the page's own data.
  var q = document.getElementById("q"), results = document.getElementById("results");
  var count = document.getElementById("q-count"), data = null;
  function load() {
    if (data) { return data; }
    data = [];
    var el = document.getElementById("search-data");
    if (!el || !window.fzstd) { return data; }
    var text = el.content ? el.content.textContent : el.textContent;
    var bin = atob(text.trim()), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) { bytes[i] = bin.charCodeAt(i); }
    try { data = JSON.parse(new TextDecoder().decode(window.fzstd.decompress(bytes))); }
    catch (e) { data = []; }
    data.forEach(function (s) { s.t.forEach(function (t) { t[3] = " " + t[3]; }); });
    return data;
  }
  var LIMIT = 200;
  function search() {
    var words = q.value.toLowerCase().split(/[^\p{L}\p{N}_]+/u).filter(Boolean);
    results.textContent = "";
    if (!words.length) { results.hidden = true; count.textContent = ""; return; }
    var found = 0;
    load().forEach(function (s) {
      s.t.forEach(function (t) {
        if (!words.every(function (w) { return t[3].indexOf(" " + w) !== -1; })) { return; }
        found++;
        if (found > LIMIT) { return; }
        var li = document.createElement("li"), a = document.createElement("a");
        a.href = s.f + "#" + t[0];
        a.textContent = s.h + (s.p ? " · " + s.p : "") + (s.d ? " · " + s.d : "") + " · turn " + t[1];
        li.appendChild(a);
        if (t[2]) {
          var sn = document.createElement("span");
          sn.className = "dim";
          sn.textContent = " " + t[2];
          li.appendChild(sn);
        }
        results.appendChild(li);
      });
    });
    results.hidden = found === 0;
    count.textContent = found === 0 ? "no turn matches" :
      found + (found === 1 ? " turn" : " turns") + (found > LIMIT ? " (first " + LIMIT + " shown)" : "");
  }
  if (tools && input) {
    tools.hidden = false;
    input.addEventListener("input", filter);
    ["f-harness", "f-project", "f-from", "f-to", "f-status"].forEach(function (id) {
      var e = document.getElementById(id);
      if (e) { e.addEventListener("change", filter); }
    });
    if (q) { q.addEventListener("input", search); }
  }
})();
