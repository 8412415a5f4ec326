"use strict";
// The report's game browser: every game of a variant (or of all of them), loaded on demand from
// report-data/games-K.js (a script element, so it works from a file URL, where fetch() does not), filtered
// by bot, table, result and faults, shown a page at a time. Each game links to its viewer page.
// The filters, the page and the chosen game are kept in the page's URL (?variant=&bot=&table=&result=
// &faults=1&page=&game=), so a view can be shared as a link and is restored on load.
// A plot mark's figures (its SVG <title>, the tooltip on hover) are shown on a tap or click too.
(function () {
  // ------------------------------------------------------------------ plots: tap shows what hover shows
  const tip = document.getElementById("plot-tip");
  if (tip) {
    const marks = document.querySelectorAll("svg.plot *");
    for (const m of marks) {
      const t = m.querySelector(":scope > title");
      if (t && m.tagName.toLowerCase() !== "svg") m.setAttribute("data-tip", t.textContent);
    }
    document.addEventListener("click", (e) => {
      const m = e.target.closest && e.target.closest("svg.plot [data-tip]");
      if (!m) { tip.hidden = true; return; }
      tip.textContent = m.getAttribute("data-tip");
      tip.hidden = false;
      const r = m.getBoundingClientRect();
      const w = Math.min(320, window.innerWidth * 0.9);
      const x = Math.max(4, Math.min(window.scrollX + r.left, window.scrollX + window.innerWidth - w - 4));
      tip.style.left = x + "px";
      tip.style.top = (window.scrollY + r.bottom + 6) + "px";
    });
  }

  const root = document.getElementById("games");
  if (!root) return;
  const cfg = JSON.parse(document.getElementById("games-config").textContent);
  const store = (window.__refereeGames = window.__refereeGames || {});
  const $ = (id) => document.getElementById(id);
  const served = /^https?:$/.test(location.protocol);   // over referee serve: a viewer for every game
  const PAGE = cfg.page_size;
  const REASON = { c: "complete", s: "stalled", a: "aborted" };
  const ALL = "all";
  let variant = null;   // a variant's index, or ALL
  let page = 0;
  let shown = [];       // [data, game row] pairs that match the filters
  let chosen = null;    // the chosen game's id (highlighted, kept in the URL)
  let seek = null;      // the chosen game of the URL, until its page is shown

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
    // the log as text: over referee serve the log itself (/log/GAME, decompressed); from the folder the
    // viewer page's text form (?text=1); a game without a viewer page links its .jsonl.zst (a download)
    if (served && g[9]) links.append(" ", el("a", { href: "/log/" + encodeURIComponent(g[0]), text: "log", "data-testid": "log" }));
    else if (g[8]) links.append(" ", el("a", { href: cfg.shell + "?game=" + encodeURIComponent(g[0]) + "&text=1", text: "log", "data-testid": "log", title: "the game as text" }));
    else if (g[9]) links.append(" ", el("a", { href: g[9], text: "log (.zst)", "data-testid": "log", title: "zstd -dc or referee replay reads it" }));
    const cls = (g[7].length ? "has-faults" : "") + (g[0] === chosen ? " chosen" : "");
    return el("tr", { "data-game": g[0], "data-testid": "game-row", className: cls.trim() },
      el("td", { className: "l" }, href ? el("a", { href, text: g[0] }) : g[0]),
      el("td", { text: String(g[1]) }), seats,
      el("td", { className: "l reason-" + REASON[g[6]], text: REASON[g[6]] }),
      el("td", { className: "l", text: faults || "-" }), links);
  }

  function datasets() {
    if (variant === ALL) return cfg.variants.map((_, k) => store[k]).filter((d) => d);
    return store[variant] ? [store[variant]] : [];
  }

  // ------------------------------------------------------------------ the view in the URL
  function saveUrl() {
    const p = new URLSearchParams(location.search);
    const set = (k, v) => (v === "" || v == null ? p.delete(k) : p.set(k, v));
    // defaults (the first variant, page 1, no filter) are left out
    set("variant", variant === ALL ? ALL : variant ? cfg.variants[variant].name : "");
    set("bot", $("gb-bot").value);
    set("table", $("gb-table").value.trim());
    set("result", $("gb-result").value);
    set("faults", $("gb-faults").checked ? "1" : "");
    set("page", page > 0 ? String(page + 1) : "");
    set("game", chosen || "");
    const q = p.toString();
    try { history.replaceState(null, "", location.pathname + (q ? "?" + q : "") + location.hash); } catch (e) { /* a browser that refuses: the view is just not in the URL */ }
  }

  function restore() {
    const p = new URLSearchParams(location.search);
    const v = p.get("variant");
    let k = cfg.variants.length ? 0 : null;
    if (v === ALL && cfg.variants.length > 1) k = ALL;
    else if (v !== null) { const i = cfg.variants.findIndex((x) => x.name === v); if (i >= 0) k = i; }
    const bot = p.get("bot");
    if (bot !== null && cfg.bots.includes(bot)) $("gb-bot").value = bot;
    if (p.get("table") !== null) $("gb-table").value = p.get("table");
    const result = p.get("result");
    if (result !== null && Object.values(REASON).includes(result)) $("gb-result").value = result;
    $("gb-faults").checked = p.get("faults") === "1";
    chosen = p.get("game");
    const pg = parseInt(p.get("page") || "1", 10);
    return { k, page: isFinite(pg) && pg > 0 ? pg - 1 : 0 };
  }

  function render() {
    const body = $("gb-rows");
    body.replaceChildren();
    const sets = datasets();
    if (!sets.length) return;
    shown = [];
    let total = 0;
    for (const data of sets) {
      total += data.games.length;
      for (const g of data.games) if (matches(data, g)) shown.push([data, g]);
    }
    const pages = Math.max(1, Math.ceil(shown.length / PAGE));
    page = Math.max(0, Math.min(page, pages - 1));
    const part = shown.slice(page * PAGE, page * PAGE + PAGE);
    const frag = document.createDocumentFragment();
    for (const [data, g] of part) frag.append(row(data, g));
    body.append(frag);
    const from = shown.length ? page * PAGE + 1 : 0;
    const where = variant === ALL ? "all variants" : cfg.variants[variant].name;
    $("gb-count").textContent = `${from}-${page * PAGE + part.length} of ${shown.length} games` +
      (shown.length !== total ? ` (${total} in ${where})` : "");
    $("gb-count").dataset.total = String(shown.length);
    $("gb-page").textContent = `page ${page + 1} of ${pages}`;
    $("gb-prev").disabled = page === 0;
    $("gb-next").disabled = page >= pages - 1;
    $("gb-empty").hidden = shown.length !== 0;
    saveUrl();
  }

  async function choose(k, keepPage) {
    variant = k;
    if (!keepPage) page = 0;
    $("gb-variant").value = String(k);
    $("gb-status").textContent = "loading...";
    root.dataset.ready = "false";
    try {
      if (k === ALL) await Promise.all(cfg.variants.map((_, i) => load(i)));
      else await load(k);
      $("gb-status").textContent = "";
      render();
      if (seek) {   // the URL's chosen game: open the page it is on
        const i = shown.findIndex((x) => x[1][0] === seek);
        if (i >= 0 && Math.floor(i / PAGE) !== page) choosePage(Math.floor(i / PAGE));
        const tr = $("gb-rows").querySelector(`tr[data-game="${CSS.escape(seek)}"]`);
        if (tr) tr.scrollIntoView({ block: "center" });
        seek = null;
      }
      root.dataset.ready = "true";
    } catch (e) {
      $("gb-status").textContent = "error: " + e.message;
      root.dataset.ready = "error";
    }
  }

  function choosePage(pg) {
    page = pg;
    render();
  }

  const vsel = $("gb-variant");
  if (cfg.variants.length > 1) {
    const n = cfg.variants.reduce((a, v) => a + v.games, 0);
    vsel.append(el("option", { value: ALL, text: `all variants (${n})` }));
  }
  cfg.variants.forEach((v, k) => vsel.append(el("option", { value: String(k), text: `${v.name} (${v.games})` })));
  const bsel = $("gb-bot");
  bsel.append(el("option", { value: "", text: "any bot" }));
  for (const b of cfg.bots) bsel.append(el("option", { value: b, text: b }));
  vsel.addEventListener("change", () => choose(vsel.value === ALL ? ALL : Number(vsel.value)));
  for (const id of ["gb-bot", "gb-result", "gb-faults"]) $(id).addEventListener("change", () => choosePage(0));
  $("gb-table").addEventListener("input", () => choosePage(0));
  $("gb-prev").addEventListener("click", () => choosePage(page - 1));
  $("gb-next").addEventListener("click", () => choosePage(page + 1));
  // a click on a game's row (or one of its links) chooses it: it is highlighted and kept in the URL,
  // so going back from its viewer page shows the same list with the same game
  $("gb-rows").addEventListener("click", (e) => {
    const tr = e.target.closest("tr[data-game]");
    if (!tr) return;
    chosen = tr.dataset.game;
    for (const r of $("gb-rows").querySelectorAll("tr.chosen")) r.classList.remove("chosen");
    tr.classList.add("chosen");
    saveUrl();
  });
  window.refereeGames = { choose, get shown() { return shown.map((x) => x[1]); } };
  const start = restore();
  if (start.k !== null) {
    page = start.page;
    seek = chosen;
    choose(start.k, true);
  } else { $("gb-status").textContent = "no games yet"; root.dataset.ready = "true"; }
})();
