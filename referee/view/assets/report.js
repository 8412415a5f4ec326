"use strict";
// The report's game browser: every game of a variant, loaded on demand from report-data/games-K.js
// (a script element, so it works from a file URL, where fetch() does not), filtered by bot, table, result
// and faults, shown a page at a time. Each game links to its viewer page.
(function () {
  const root = document.getElementById("games");
  if (!root) return;
  const cfg = JSON.parse(document.getElementById("games-config").textContent);
  const store = (window.__refereeGames = window.__refereeGames || {});
  const $ = (id) => document.getElementById(id);
  const served = /^https?:$/.test(location.protocol);   // over referee serve: a viewer for every game
  const PAGE = cfg.page_size;
  const REASON = { c: "complete", s: "stalled", a: "aborted" };
  let variant = null;
  let page = 0;
  let shown = [];

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") e.textContent = v;
      else if (k.startsWith("data-")) e.setAttribute(k, v);
      else e[k] = v;
    }
    for (const kid of kids) if (kid != null) e.append(kid);
    return e;
  }

  function load(k) {
    return new Promise((resolve, reject) => {
      if (store[k]) return resolve(store[k]);
      const s = document.createElement("script");
      s.src = cfg.variants[k].src;
      s.onload = () => (store[k] ? resolve(store[k]) : reject(new Error("no data in " + s.src)));
      s.onerror = () => reject(new Error("could not load " + s.src));
      document.head.append(s);
    });
  }

  function viewerHref(g) {
    if (g[8]) return cfg.shell + "?game=" + encodeURIComponent(g[0]);
    if (served && g[9]) return "/view/" + encodeURIComponent(g[0]);
    return null;
  }

  function matches(data, g) {
    const bot = $("gb-bot").value;
    const table = $("gb-table").value.trim();
    const result = $("gb-result").value;
    if (bot !== "" && !g[2].some((b) => data.bots[b] === bot)) return false;
    if (table !== "" && String(g[1]) !== table) return false;
    if ($("gb-faults").checked && g[7].length === 0) return false;
    if (result !== "" && REASON[g[6]] !== result) return false;
    return true;
  }

  function row(data, g) {
    const seats = el("td", { className: "seats" });
    g[2].forEach((b, s) => {
      const forfeit = g[5].includes(s);
      const win = g[6] !== "a" && g[4][s] === 1 && !forfeit;
      const span = el("span", { className: "seat" + (win ? " win" : "") + (forfeit ? " forfeit" : ""),
        title: `seat ${s}: ${data.bots[b]}, score ${g[3][s]}, place ${g[4][s]}` + (forfeit ? ", forfeited" : "") },
      data.bots[b] + " ", el("b", { text: String(g[3][s]) }));
      seats.append(span);
    });
    const faults = g[7].map((f) => `${f[1]} (seat ${f[0]}, ${data.bots[g[2][f[0]]]})`).join(", ");
    const href = viewerHref(g);
    const links = el("td", { className: "links" });
    if (href) links.append(el("a", { href, text: "watch", "data-testid": "watch" }));
    else links.append(el("span", { className: "muted", text: "no viewer page", title: cfg.no_viewer_hint }));
    if (g[9]) links.append(" ", el("a", { href: g[9], text: "log", "data-testid": "log" }));
    return el("tr", { "data-game": g[0], "data-testid": "game-row", className: g[7].length ? "has-faults" : "" },
      el("td", { className: "l" }, href ? el("a", { href, text: g[0] }) : g[0]),
      el("td", { text: String(g[1]) }), seats,
      el("td", { className: "l reason-" + REASON[g[6]], text: REASON[g[6]] }),
      el("td", { className: "l", text: faults || "-" }), links);
  }

  function render() {
    const data = store[variant];
    const body = $("gb-rows");
    body.replaceChildren();
    if (!data) return;
    shown = data.games.filter((g) => matches(data, g));
    const pages = Math.max(1, Math.ceil(shown.length / PAGE));
    page = Math.min(page, pages - 1);
    const part = shown.slice(page * PAGE, page * PAGE + PAGE);
    const frag = document.createDocumentFragment();
    for (const g of part) frag.append(row(data, g));
    body.append(frag);
    const from = shown.length ? page * PAGE + 1 : 0;
    $("gb-count").textContent = `${from}-${page * PAGE + part.length} of ${shown.length} games` +
      (shown.length !== data.games.length ? ` (${data.games.length} in ${cfg.variants[variant].name})` : "");
    $("gb-count").dataset.total = String(shown.length);
    $("gb-page").textContent = `page ${page + 1} of ${pages}`;
    $("gb-prev").disabled = page === 0;
    $("gb-next").disabled = page >= pages - 1;
    $("gb-empty").hidden = shown.length !== 0;
  }

  async function choose(k) {
    variant = k;
    page = 0;
    $("gb-status").textContent = "loading...";
    root.dataset.ready = "false";
    try {
      await load(k);
      $("gb-status").textContent = "";
      render();
      root.dataset.ready = "true";
    } catch (e) {
      $("gb-status").textContent = "error: " + e.message;
      root.dataset.ready = "error";
    }
  }

  const vsel = $("gb-variant");
  cfg.variants.forEach((v, k) => vsel.append(el("option", { value: String(k), text: `${v.name} (${v.games})` })));
  const bsel = $("gb-bot");
  bsel.append(el("option", { value: "", text: "any bot" }));
  for (const b of cfg.bots) bsel.append(el("option", { value: b, text: b }));
  vsel.addEventListener("change", () => choose(Number(vsel.value)));
  for (const id of ["gb-bot", "gb-result", "gb-faults"]) $(id).addEventListener("change", () => { page = 0; render(); });
  $("gb-table").addEventListener("input", () => { page = 0; render(); });
  $("gb-prev").addEventListener("click", () => { page--; render(); });
  $("gb-next").addEventListener("click", () => { page++; render(); });
  window.refereeGames = { choose, get shown() { return shown; } };
  if (cfg.variants.length) choose(0);
  else { $("gb-status").textContent = "no games yet"; root.dataset.ready = "true"; }
})();
