// tracebook notebook behaviour. Everything also reads with JavaScript off; this script only
// opens the folds around a deep-link target and shows times in the reader's time zone.
(function () {
  "use strict";
  function reveal(id) {
    if (!id) return;
    var el = document.getElementById(id);
    if (!el) return;
    for (var p = el; p; p = p.parentElement) {
      if (p.tagName === "DETAILS") p.open = true;
    }
    if (el.firstElementChild && el.firstElementChild.tagName === "DETAILS") {
      el.firstElementChild.open = true;
    }
    var old = document.querySelectorAll(".targeted");
    for (var i = 0; i < old.length; i++) old[i].classList.remove("targeted");
    el.classList.add("targeted");
    el.scrollIntoView({ block: "start" });
  }
  function fromHash() {
    try { reveal(decodeURIComponent(location.hash.slice(1))); } catch (e) { /* bad hash */ }
  }
  function localTimes() {
    var times = document.querySelectorAll("time[datetime]");
    for (var i = 0; i < times.length; i++) {
      var t = times[i], iso = t.getAttribute("datetime"), d = new Date(iso);
      if (isNaN(d.getTime())) continue;
      t.title = iso + " (UTC)";
      t.textContent = d.toLocaleString(undefined, {
        year: "numeric", month: "short", day: "numeric",
        hour: "2-digit", minute: "2-digit", second: "2-digit"
      });
    }
  }
  window.addEventListener("hashchange", fromHash);
  document.addEventListener("DOMContentLoaded", function () { localTimes(); fromHash(); });
})();
