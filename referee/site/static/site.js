/* The site's pages: the parts marked data-refresh are fetched again every few seconds (the body's
   data-refresh-ms) and swapped in place, so the leaderboard, the live list and a version's state
   follow the ladder without a reload. A part marked data-final has stopped changing. No build step. */
(function () {
  "use strict";
  var parts = document.querySelectorAll("[data-refresh][id]");
  if (!parts.length || !window.fetch || !window.DOMParser) return;
  var every = parseInt(document.body.dataset.refreshMs || "2000", 10);
  var busy = false;
  function live() {
    return Array.prototype.filter.call(document.querySelectorAll("[data-refresh][id]"), function (el) {
      return !el.hasAttribute("data-final");
    });
  }
  function tick() {
    var todo = live();
    if (!todo.length) return;
    if (busy || document.hidden) { setTimeout(tick, every); return; }
    busy = true;
    fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (text) {
        if (text === null) return;
        var doc = new DOMParser().parseFromString(text, "text/html");
        todo.forEach(function (el) {
          var fresh = doc.getElementById(el.id);
          if (!fresh || fresh.innerHTML === el.innerHTML) return;
          el.innerHTML = fresh.innerHTML;
          if (fresh.hasAttribute("data-final")) el.setAttribute("data-final", "");
        });
        document.body.dataset.refreshed = String(Date.now());
      })
      .catch(function () { /* the site restarting: try again next time */ })
      .then(function () { busy = false; setTimeout(tick, every); });
  }
  setTimeout(tick, every);
})();
