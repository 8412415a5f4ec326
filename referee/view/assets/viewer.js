/* card-referee game viewer: steps through a "frames" document (docs/VIEWER-FORMAT.md, format card-referee-frames
   v1; a v2 document, the game's events, is expanded into v1 frames by expand.js, loaded before this script).
   No network: the data is embedded (#game-data) or loaded from GAME.frames.js next to this page (?game=GAME).
   Live: ?game=GAME&live=URL follows a game being played through server-sent events from URL (`referee serve`'s
   /live/GAME: a "header" event, then an "event" event per event record, expanded here, then "end"); it stays on the newest step
   unless the user steps back, and loads GAME.frames.js (the result, the verified badge) once the game ends. */
(function () {
  "use strict";

  var FORMAT = "card-referee-frames";
  var VERSION = 1;
  var BASE_MS = 1000;
  var GAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
  var SUITS = {
    S: { name: "spades", red: false }, H: { name: "hearts", red: true },
    D: { name: "diamonds", red: true }, C: { name: "clubs", red: false }
  };
  var CHICKENS = {
    "robber": { idx: "7", name: "robber", label: "robber (black 7)", cls: "black" },
    "pickpocket": { idx: "6", name: "pickpkt", label: "pickpocket (black 6)", cls: "black" },
    "police": { idx: "10", name: "police", label: "police (black 10)", cls: "police" },
    "jack-black": { idx: "J", name: "jack", label: "black jack", cls: "black noble" },
    "jack-red": { idx: "J", name: "jack", label: "red jack", cls: "red noble" },
    "queen": { idx: "Q", name: "queen", label: "queen", cls: "gold noble" },
    "king": { idx: "K", name: "king", label: "king", cls: "gold noble" },
    "ace": { idx: "A", name: "ace", label: "ace", cls: "gold noble" }
  };
  var DEFAULT_VALUES = { "robber": 0, "pickpocket": 0, "police": 0, "jack-black": -1, "jack-red": 1, "queen": 2, "king": 2, "ace": 4 };
  var KIND_LABEL = {
    start: "deal", ask: "ask", laid: "family laid", draw: "draw", play: "play", reveal: "reveal",
    take: "take", round: "round over", fault: "fault", retry: "retry", end: "end"
  };

  var D = null, frames = [], states = [], thinkAt = [], revealAt = [];
  var live = null;  // following a running game: {source, ended}
  var cur = 0, last = 0, view = "all", playing = false, timer = null, deck = null, nSeats = 0;
  var seatEls = [], logItems = [];
  var el = {};

  function $(id) { return document.getElementById(id); }
  // set an element's markup only when it changed (stepping re-renders every seat)
  function setHTML(node, markup) {
    if (node.__markup !== markup) {
      node.innerHTML = markup;
      node.__markup = markup;
    }
  }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function num(x, digits) {
    if (typeof x !== "number" || !isFinite(x)) return "–";
    return Number.isInteger(x) ? String(x) : x.toFixed(digits === undefined ? 2 : digits);
  }
  function ms(x) {
    if (typeof x !== "number") return "";
    return x >= 100 ? x.toFixed(0) + " ms" : x >= 10 ? x.toFixed(1) + " ms" : x.toFixed(2) + " ms";
  }
  function signed(v) { return v > 0 ? "+" + v : String(v); }
  function asList(x) { return x === null || x === undefined ? [] : Array.isArray(x) ? x : [x]; }

  function showError(msg) {
    el.error.textContent = "error: " + msg;
    el.error.hidden = false;
    el.main.hidden = true;
    el.app.dataset.ready = "error";
  }

  // ---------------------------------------------------------------- data loading
  function load() {
    var embedded = $("game-data");
    if (embedded) {
      var data;
      try { data = JSON.parse(embedded.textContent); } catch (e) {
        showError("the embedded game data is not valid JSON (" + e.message + ")");
        return;
      }
      start(data);
      return;
    }
    var params = new URLSearchParams(window.location.search);
    var game = params.get("game");
    if (!game) {
      showError("no game given: open this page as viewer.html?game=GAME (GAME.frames.js must be in the same folder)");
      return;
    }
    if (!GAME_RE.test(game)) {
      showError("not a game id: " + JSON.stringify(game) + " (letters, digits, '.', '_' and '-' only)");
      return;
    }
    var liveUrl = params.get("live");
    if (liveUrl) { follow(game, liveUrl); return; }
    loadPage(game);
  }

  function loadPage(game) {
    var script = document.createElement("script");
    script.src = encodeURIComponent(game) + ".frames.js";
    script.onload = function () {
      var data = window.__referee_game_data;
      if (!data) { showError(game + ".frames.js did not define the game data"); return; }
      start(data);
    };
    script.onerror = function () {
      showError("could not load " + game + ".frames.js: it must be in the same folder as this page");
    };
    document.head.appendChild(script);
  }

  // ---------------------------------------------------------------- a live game (server-sent events)
  function follow(game, url) {
    var header = null, expander = null, got = 0;
    var source;
    try { source = new EventSource(url); } catch (e) { showError("cannot follow " + url + " (" + e.message + ")"); return; }
    live = { source: source, ended: false };
    el.app.dataset.live = "connecting";
    source.addEventListener("header", function (ev) {
      if (header) return;  // (a reconnection repeats it)
      header = JSON.parse(ev.data);
      if (header.game !== game) { source.close(); showError("the live stream is of game " + header.game + ", not " + game); return; }
      if (header.version !== 2) { source.close(); showError("the live stream is not of version 2 (" + JSON.stringify(header.version) + ")"); return; }
      expander = new window.refereeExpand.Expander(header);
    });
    // each event record, expanded into the frames it makes (docs/VIEWER-FORMAT.md, version 2)
    source.addEventListener("event", function (ev) {
      var item = JSON.parse(ev.data);
      if (!expander || item.i !== got) return;  // a record already taken (after a reconnection)
      got += 1;
      var made = expander.push(item.event);
      if (D === null) {
        if (!expander.frames.length) return;
        var data = Object.assign({}, header, { version: VERSION, frames: expander.frames.slice(), result: null, verified: null, mismatch: null, live: true });
        delete data.deck;
        start(data);
        if (D) el.app.dataset.live = "following";
        return;
      }
      made.forEach(addFrame);
    });
    source.addEventListener("end", function () {
      source.close();
      live.ended = true;
      el.app.dataset.live = "ended";
      finalPage(game, 0);
    });
    // the server's word that the game is not (or no longer) being played (`referee serve` sends
    // `gone`, the site an `error` event with data): stop following (no reconnection) and show its page
    function stopped() {
      source.close();
      live = null;
      delete el.app.dataset.live;
      if (D === null) loadPage(game); else finalPage(game, 0);
    }
    source.addEventListener("gone", stopped);
    source.onerror = function (ev) {
      if (live === null || live.ended) return;
      if (ev && typeof ev.data === "string") { stopped(); return; }  // a named `error` event, not a broken connection
      if (D === null && source.readyState === EventSource.CLOSED) {
        // not (or no longer) being played: the game's page, if it has one
        live = null;
        delete el.app.dataset.live;
        loadPage(game);
      }
    };
  }

  // a frame that arrived while the viewer shows the game: the newest step is followed unless the user stepped back
  function addFrame(f) {
    var atEnd = cur === last;
    frames.push(f);
    last = frames.length - 1;
    precompute();
    appendLog(f, last);
    buildTicks();
    el.scrubber.max = String(last);
    el.meta.textContent = el.meta.textContent.replace(/\d+ steps$/, frames.length + " steps");
    if (atEnd && !playing) go(last, true);
    else render();
  }

  // once the game is over: its final page (with the result and the verified badge), when it is there
  function finalPage(game, tries) {
    var script = document.createElement("script");
    window.__referee_game_data = undefined;
    script.src = encodeURIComponent(game) + ".frames.js?live-end=" + Date.now();
    script.onload = function () {
      var data = window.__referee_game_data;
      if (!data || check(data) || !D) return;
      D.result = data.result; D.verified = data.verified; D.mismatch = data.mismatch; D.log_capped = data.log_capped;
      buildHeader();
      render();
      el.app.dataset.live = "done";
    };
    script.onerror = function () { if (tries < 10) setTimeout(function () { finalPage(game, tries + 1); }, 300); };
    document.head.appendChild(script);
  }

  function check(data) {
    if (!data || typeof data !== "object") return "the game data is not an object";
    if (data.format !== FORMAT) return "not a card-referee frames document (format " + JSON.stringify(data.format) + ")";
    if (data.version === 2) {
      if (!Array.isArray(data.events) || data.events.length === 0) return "the game data has no events";
      if (!Array.isArray(data.seats) || data.seats.length === 0) return "the game data has no seats";
      return null;
    }
    if (data.version !== VERSION) return "frames version " + JSON.stringify(data.version) + " is not supported by this viewer (it reads versions 1 and 2); regenerate the page with this referee";
    if (!Array.isArray(data.frames) || data.frames.length === 0) return "the game data has no frames";
    if (!Array.isArray(data.seats) || data.seats.length === 0) return "the game data has no seats";
    return null;
  }

  // ---------------------------------------------------------------- states (StatePatch semantics)
  function applyPatch(prev, patch) {
    var next = Object.assign({}, prev);
    Object.keys(patch || {}).forEach(function (key) {
      if (key === "hands") next.hands = Object.assign({}, prev.hands || {}, patch.hands || {});
      else next[key] = patch[key];
    });
    return next;
  }
  function stateAt(k) {
    if (states.length === 0) states.push(applyPatch({}, frames[0].state));
    for (var i = states.length; i <= k; i++) states.push(applyPatch(states[i - 1], frames[i].state));
    return states[k];
  }

  function precompute() {
    thinkAt = []; revealAt = [];
    var acc = [];
    for (var s = 0; s < nSeats; s++) acc.push({ n: 0, sum: 0, max: 0, last: null });
    var reveal = -1;
    frames.forEach(function (f, i) {
      if (f.actor !== null && f.actor !== undefined && typeof f.think_ms === "number" && acc[f.actor]) {
        acc = acc.slice();
        var a = acc[f.actor];
        acc[f.actor] = { n: a.n + 1, sum: a.sum + f.think_ms, max: Math.max(a.max, f.think_ms), last: f.think_ms };
      }
      thinkAt.push(acc);
      if (f.kind === "reveal") reveal = i;
      else if (f.kind === "play" || f.kind === "round" || f.kind === "start" || f.kind === "end") reveal = -1;
      revealAt.push(reveal);
    });
  }

  // ---------------------------------------------------------------- cards
  function buildDeck() {
    var rules = D.rules || {};
    if (D.kind === "chickens") return { kind: "chickens", values: rules.cards || DEFAULT_VALUES };
    var fams = rules.families || [], mems = rules.members || [];
    var suits = mems.length === 4 && ["S", "H", "D", "C"].every(function (m) { return mems.indexOf(m) >= 0; });
    var map = {}, famIndex = {};
    fams.forEach(function (f, fi) {
      famIndex[f] = fi;
      mems.forEach(function (m, mi) { map[f + m] = { f: f, m: m, fi: fi, mi: mi }; });
    });
    return { kind: "ask", suits: suits, fams: fams, mems: mems, map: map, famIndex: famIndex };
  }
  function hue(fi) { return Math.round((fi * 360) / Math.max(1, deck.fams.length)) % 360; }
  function pip(suit, cls) {
    return '<svg class="pip' + (cls ? " " + cls : "") + '" viewBox="0 0 100 100" aria-hidden="true"><use href="#suit-' + suit + '"/></svg>';
  }
  function cardName(card) {
    if (deck.kind === "chickens") {
      var c = CHICKENS[card], v = deck.values[card];
      return (c ? c.label : card) + (typeof v === "number" && v !== 0 ? " (" + signed(v) + ")" : "");
    }
    var info = deck.map[card];
    if (!info) return card;
    if (deck.suits) return info.f + " of " + SUITS[info.m].name;
    return "family " + info.f + ", member " + info.m;
  }
  function cardHTML(card, cls) {
    var extra = cls ? " " + cls : "";
    var attrs = ' data-card="' + esc(card) + '" title="' + esc(cardName(card)) + '" role="img" aria-label="' + esc(cardName(card)) + '"';
    if (deck.kind === "chickens") {
      var c = CHICKENS[card] || { idx: String(card).slice(0, 2), name: card, cls: "black" };
      var v = deck.values[card];
      var val = typeof v === "number" && v !== 0 ? '<span class="cv">' + signed(v) + "</span>" : "";
      return '<span class="card chk ' + c.cls + extra + '"' + attrs + '><span class="ci">' + esc(c.idx) +
        '</span><span class="cn">' + esc(c.name) + "</span>" + val + "</span>";
    }
    var info = deck.map[card];
    if (!info) return '<span class="card black' + extra + '"' + attrs + '><span class="ci">' + esc(card) + "</span></span>";
    if (deck.suits) {
      var red = SUITS[info.m].red;
      return '<span class="card suit ' + (red ? "red" : "black") + extra + '"' + attrs + '><span class="ci">' + esc(info.f) +
        "</span>" + pip(info.m) + "</span>";
    }
    var long = info.f.length > 2 || info.m.length > 2 ? " wide" : "";
    return '<span class="card fam' + long + extra + '" style="--h:' + hue(info.fi) + '"' + attrs + '><span class="ci">' +
      esc(info.f) + '</span><span class="cm">' + esc(info.m) + "</span></span>";
  }
  function backHTML() { return '<span class="card back" data-back="1" aria-hidden="true"></span>'; }
  function familyHTML(fam, cls) {
    var extra = cls ? " " + cls : "";
    var attrs = ' data-family="' + esc(fam) + '" title="family ' + esc(fam) + '"';
    if (deck.kind === "ask" && deck.suits) {
      return '<span class="fchip' + extra + '"' + attrs + ">" + esc(fam) + pip("S") + pip("H", "red") + pip("D", "red") + pip("C") + "</span>";
    }
    var fi = deck.famIndex ? deck.famIndex[fam] : undefined;
    var style = fi === undefined ? "" : ' style="--h:' + hue(fi) + '"';
    return '<span class="fchip famc' + extra + '"' + style + attrs + ">" + esc(fam) + "</span>";
  }

  // ---------------------------------------------------------------- helpers on seats
  function seatName(s) {
    var seat = D.seats[s];
    return seat ? seat.bot : "seat " + s;
  }
  function who(s) {
    if (s === null || s === undefined) return "";
    return '<span class="who">' + esc(seatName(s)) + '</span> <span class="seat-no" title="seat ' + s + '">' + s + "</span>";
  }
  // a finishing place in words ("1st", "2nd", "3rd", "4th"): "#3" next to a copy's name "jb#2" read as one
  function placeText(k) {
    var t = k % 100;
    var suffix = t >= 11 && t <= 13 ? "th" : ["th", "st", "nd", "rd"][k % 10] || "th";
    return String(k) + suffix;
  }
  function canSee(s) { return view === "all" || view === s; }
  // a hand every seat knows: in chickens every seat starts each round with the same cards and every
  // play is revealed, so a hand is public except while it holds back a hidden play of this turn
  function publicHand(s, st) { return D.kind === "chickens" && !(st.played && st.played[s]); }
  function turnSeats(st) { return asList(st.turn); }

  // ---------------------------------------------------------------- static parts
  function buildHeader() {
    var rules = D.rules || {};
    document.title = D.game + " · " + D.variant + " — card-referee viewer";
    el.gameId.textContent = D.game;
    var kind = D.kind === "chickens" ? "chickens" : "ask game";
    el.variant.innerHTML = "<b>" + esc(D.variant) + "</b> · " + esc(kind) + " · " + nSeats + " players";
    if (D.verified === true) {
      el.verified.className = "verified yes";
      el.verified.textContent = "✓ verified by replay";
    } else if (D.live && D.verified === null) {
      el.verified.className = "verified live";
      el.verified.textContent = "● live: being played";
    } else {
      el.verified.className = "verified no";
      el.verified.textContent = "✗ not verified by replay";
    }
    el.verified.dataset.verified = String(D.verified === true);
    var meta = [];
    if (D.kind !== "chickens" && rules.families) {
      meta.push(rules.families.length + " families × " + (rules.members || []).length + " members");
      meta.push(rules.ask === "family" ? "ask for a whole family" : "ask for one card");
      meta.push("after a miss: " + (rules.miss === "next" ? "next seat with cards" : "the asked seat"));
      if (rules.please) meta.push("politeness rule");
      if (rules.stock) meta.push("stock of " + rules.stock);
      if (rules.first === "dealer") meta.push("dealer starts");
    } else if (D.kind === "chickens") {
      meta.push((rules.rounds || nSeats) + " rounds of 8 turns");
    }
    var m = D.match;
    if (m) {
      if (m.kind === "race") meta.push("race match to " + m.target + (m.max_hands ? " (at most " + m.max_hands + " hands)" : ""));
      else meta.push("fixed match of " + m.hands + " hands");
    }
    meta.push(frames.length + " steps");
    el.meta.textContent = meta.join(" · ");

    var r = D.result;
    var out = [];
    if (r) {
      out.push('<span class="reason ' + esc(r.reason) + '" data-testid="result-reason" title="' + esc(r.detail || r.reason) + '">' + esc(r.reason) + "</span>");
      var forfeits = asList(r.forfeits);
      D.seats.forEach(function (seat, s) {
        var rank = r.ranks ? r.ranks[s] : null;
        var hello = seat.hello ? esc(seat.hello.name || "") + " " + esc(seat.hello.version || "") : "no hello";
        var ff = forfeits.indexOf(s) >= 0;
        out.push('<span class="rchip' + (rank === 1 && !ff ? " win" : "") + '" data-testid="result-' + s + '" title="seat ' + s + ": " + esc(seat.bot) + " (" + hello + ")" +
          (r.win_shares ? ", win share " + num(r.win_shares[s], 3) : "") + '">' +
          '<span class="rk">' + (rank === null || rank === undefined ? "" : placeText(rank)) + "</span>" + esc(seat.bot) +
          ' <span class="hl">' + hello + "</span> <b>" + num(r.scores ? r.scores[s] : null) + "</b>" +
          (ff ? ' <span class="badge fault">forfeit</span>' : "") + "</span>");
      });
      if (r.detail) out.push('<span class="muted" data-testid="result-detail">' + esc(r.detail) + "</span>");
    }
    el.result.innerHTML = out.join("");
  }

  function buildSeats() {
    for (var s = 0; s < nSeats; s++) {
      var div = document.createElement("div");
      div.className = "seat";
      div.setAttribute("data-testid", "seat-" + s);
      div.dataset.seat = String(s);
      var seat = D.seats[s];
      var hello = seat.hello ? (seat.hello.name || "") + " " + (seat.hello.version || "") : "";
      div.innerHTML =
        '<div class="seat-head"><span class="seat-no">' + s + '</span><span class="bot" data-testid="bot-' + s + '" title="' + esc(seat.bot) + '">' + esc(seat.bot) + "</span>" +
        '<span class="hello" data-testid="hello-' + s + '" title="' + esc(hello ? "hello: " + hello : "no hello") + '">' + esc(hello) + "</span>" +
        '<span class="markers" data-testid="markers-' + s + '"></span>' +
        '<span class="score" title="score"><span class="lbl">score</span> <b data-testid="score-' + s + '"></b></span></div>' +
        '<div class="hand" data-testid="hand-' + s + '"></div>' +
        '<div class="seat-foot"><span><b data-testid="count-' + s + '"></b> <span class="lbl">cards</span></span>' +
        '<span class="laid"><span class="lbl" title="' + (D.kind === "chickens" ? "nobles taken this round" : "families laid this hand") + '">' +
        (D.kind === "chickens" ? "taken" : "laid") + '</span> <span class="laid" data-testid="laid-' + s + '"></span></span>' +
        '<span class="revealed" data-testid="revealed-' + s + '"></span>' +
        '<span class="think" data-testid="think-' + s + '"></span></div>';
      seatEls.push({
        root: div, markers: div.querySelector(".markers"), hand: div.querySelector(".hand"),
        count: div.querySelector('[data-testid="count-' + s + '"]'), laid: div.querySelector('[data-testid="laid-' + s + '"]'),
        score: div.querySelector('[data-testid="score-' + s + '"]'), think: div.querySelector('[data-testid="think-' + s + '"]'),
        revealed: div.querySelector('[data-testid="revealed-' + s + '"]')
      });
    }
  }

  function layoutSeats() {
    // clockwise around the table, the viewing seat (or seat 0) at the bottom: the bottom row runs right to left,
    // the top row left to right (seat X+1 is to the left of seat X)
    var viewer = view === "all" ? 0 : view;
    var b = Math.max(1, Math.floor(nSeats / 2));
    var r = Math.floor((b - 1) / 2);
    var s0 = (viewer - r + nSeats) % nSeats;
    el.rowTop.innerHTML = "";
    el.rowBottom.innerHTML = "";
    for (var i = 0; i < nSeats; i++) {
      var s = (s0 + i) % nSeats;
      (i < b ? el.rowBottom : el.rowTop).appendChild(seatEls[s].root);
    }
  }

  function buildViewSelect() {
    var opts = ['<option value="all">all hands (god view)</option>'];
    D.seats.forEach(function (seat, s) {
      opts.push('<option value="' + s + '">as seat ' + s + " (" + esc(seat.bot) + ") saw it</option>");
    });
    el.view.innerHTML = opts.join("");
  }

  function frameTags(f) {
    var tags = [];
    if (f.kind === "fault" || f.fault) tags.push(["fault", f.fault ? f.fault.fault : "fault"]);
    if (f.kind === "retry" || f.retry) tags.push(["retry", "retry"]);
    if (f.fallback) tags.push(["fallback", "fallback"]);
    if (f.kind === "end" && f.end && f.end.reason !== "complete") tags.push(["end", f.end.reason]);
    return tags;
  }

  function logItemHTML(f, i) {
    var tags = frameTags(f);
    var marked = tags.some(function (t) { return t[0] !== "end"; });
    return '<li data-testid="log-item-' + i + '" data-i="' + i + '" class="k-' + esc(f.kind) + (marked ? " marked" : "") + '">' +
      '<span class="n">' + i + '</span><span class="tx">' + esc(f.text || KIND_LABEL[f.kind] || f.kind) + "</span>" +
      tags.map(function (t) { return '<span class="tg ' + t[0] + '">' + esc(t[1]) + "</span>"; }).join("") +
      (typeof f.think_ms === "number" ? '<span class="ms">' + ms(f.think_ms) + "</span>" : "") + "</li>";
  }
  function buildLog() {
    el.log.innerHTML = frames.map(logItemHTML).join("");
    logItems = Array.prototype.slice.call(el.log.children);
    el.logTotal.textContent = "(" + frames.length + ")";
  }
  function appendLog(f, i) {
    el.log.insertAdjacentHTML("beforeend", logItemHTML(f, i));
    logItems.push(el.log.lastElementChild);
    el.logTotal.textContent = "(" + frames.length + ")";
  }

  function buildTicks() {
    var html = [];
    var span = Math.max(1, last);
    frames.forEach(function (f, i) {
      var cls = null;
      if (f.kind === "fault" || f.fault) cls = "t-fault";
      else if (f.kind === "retry" || f.retry) cls = "t-retry";
      else if (f.fallback) cls = "t-fallback";
      else if (f.kind === "start" && i > 0) cls = "t-hand";
      else if (f.kind === "end") cls = "t-end";
      if (cls) html.push('<span class="' + cls + '" style="left:' + ((100 * i) / span).toFixed(3) + '%" title="step ' + i + '"></span>');
    });
    el.ticks.innerHTML = html.join("");
  }

  // ---------------------------------------------------------------- rendering one step
  function renderSeat(s, f, st) {
    var e = seatEls[s];
    var inHand = st.in_hand ? st.in_hand[s] !== false : true;
    var turn = turnSeats(st).indexOf(s) >= 0;
    var waiting = asList(st.waiting).indexOf(s) >= 0;
    var faulted = asList(st.faulted).indexOf(s) >= 0;
    var root = e.root;
    root.classList.toggle("actor", f.actor === s);
    root.classList.toggle("target", f.target === s);
    root.classList.toggle("out", !inHand);
    root.classList.toggle("viewer", view === s);
    root.dataset.turn = String(turn);
    root.dataset.actor = String(f.actor === s);
    root.dataset.target = String(f.target === s);

    var mk = [];
    if (D.kind !== "chickens" && st.dealer === s) mk.push('<span class="mk dealer" data-testid="marker-dealer-' + s + '" title="dealer">dealer</span>');
    if (D.kind === "chickens" && st.leader === s) mk.push('<span class="mk leader" data-testid="marker-leader-' + s + '" title="robber-leader marker">leader</span>');
    if (D.kind === "chickens" && st.commissioner === s) mk.push('<span class="mk commissioner" data-testid="marker-commissioner-' + s + '" title="police-commissioner marker">commissioner</span>');
    if (turn) mk.push('<span class="mk turn" data-testid="marker-turn-' + s + '" title="acts next">to act</span>');
    else if (waiting) mk.push('<span class="mk waiting" data-testid="marker-waiting-' + s + '" title="the referee awaits this seat\'s decision">deciding</span>');
    if (D.kind === "chickens" && st.played && st.played[s]) mk.push('<span class="mk played" data-testid="marker-played-' + s + '" title="has played a hidden card this turn">played</span>');
    if (faulted) mk.push('<span class="mk fallback" data-testid="marker-fallback-' + s + '" title="faulted: the referee\'s fallback plays this seat from here on">fallback</span>');
    if (!inHand) mk.push('<span class="mk out" data-testid="marker-out-' + s + '" title="does not play this hand (tie-break)">sits out</span>');
    setHTML(e.markers, mk.join(""));

    var hand = st.hands ? st.hands[String(s)] : null;
    var count = st.counts ? st.counts[s] : hand ? hand.length : null;
    e.count.textContent = count === null || count === undefined ? "–" : String(count);
    var moved = {};
    if (f.actor === s && (f.kind === "ask" || f.kind === "draw")) asList(f.cards).forEach(function (c) { moved[c] = true; });
    var hhtml;
    if (hand === null || hand === undefined) {
      hhtml = '<span class="none">not in this hand</span>';
      e.hand.classList.remove("backs");
    } else if (canSee(s) || publicHand(s, st)) {
      hhtml = hand.length ? hand.map(function (c) { return cardHTML(c, moved[c] ? "moved" : ""); }).join("") : '<span class="none">no cards</span>';
      e.hand.classList.remove("backs");
    } else {
      var n = typeof count === "number" ? count : hand.length;
      var backs = [];
      for (var i = 0; i < n; i++) backs.push(backHTML());
      hhtml = n ? backs.join("") : '<span class="none">no cards</span>';
      e.hand.classList.toggle("backs", n > 0);
    }
    setHTML(e.hand, hhtml);
    e.hand.dataset.visible = String(canSee(s) || publicHand(s, st));

    var laid = st.laid ? st.laid[s] : null;
    if (!laid || !laid.length) setHTML(e.laid, '<span class="muted">–</span>');
    else if (D.kind === "chickens") {
      setHTML(e.laid, laid.map(function (c, i) {
        var fresh = f.kind === "take" && f.actor === s && i === laid.length - 1;
        return cardHTML(c, "mini" + (fresh ? " moved" : ""));
      }).join(""));
    } else {
      setHTML(e.laid, laid.map(function (fam) {
        var fresh = f.kind === "laid" && f.actor === s && laidFamily(f) === fam;
        return familyHTML(fam, fresh ? "moved" : "");
      }).join(""));
    }
    e.score.textContent = st.scores ? num(st.scores[s]) : "–";

    var rv = revealAt[cur];
    var revealed = rv >= 0 ? revealedCard(frames[rv], s) : null;
    setHTML(e.revealed, revealed ? '<span class="lbl" title="the card this seat played, revealed">played</span> ' + cardHTML(revealed, "mini") : "");

    var t = thinkAt[cur][s];
    e.think.textContent = t && t.n ? "think " + ms(t.last) + " · mean " + ms(t.sum / t.n) + " · max " + ms(t.max) : "";
    e.think.title = t && t.n ? "think time: the last decision, and the mean and max of the " + t.n + " timed decisions up to this step" : "";
  }

  function laidFamily(f) {
    var c = asList(f.cards);
    if (f.ask && f.ask.family) return f.ask.family;
    if (!c.length || deck.kind !== "ask") return null;
    var info = deck.map[c[0]];
    return info ? info.f : null;
  }

  function revealedCard(f, s) {
    // reveal frames carry the revealed card of every match seat in "cards" (null for seats that did not play)
    var c = f.cards;
    if (Array.isArray(c) && c.length === nSeats) return c[s] || null;
    return null;
  }

  function renderCentre(f, st) {
    var html = [];
    if (D.kind === "chickens") {
      var rounds = (D.rules && D.rules.rounds) || nSeats;
      html.push('<div class="lbl">round</div><div class="big" data-testid="round">' + (st.round === undefined ? "–" : esc(st.round)) + " / " + rounds + "</div>");
      var centre = asList(st.centre);
      var total = 0;
      centre.forEach(function (c) { total += deck.values[c] || 0; });
      html.push('<div class="lbl">centre' + (centre.length ? " (" + signed(total) + ")" : "") + "</div>");
      html.push('<div class="centre-cards" data-testid="centre">' +
        (centre.length ? centre.map(function (c) { return cardHTML(c); }).join("") : '<span class="none">empty</span>') + "</div>");
    } else {
      if (typeof st.stock === "number" && (st.stock > 0 || (D.rules && D.rules.stock))) {
        html.push('<div class="lbl">stock</div><div class="stockpile">' + (st.stock > 0 ? backHTML() : "") +
          '<span class="big" data-testid="stock">' + st.stock + "</span></div>");
      }
      var laidTotal = 0;
      asList(st.laid).forEach(function (l) { laidTotal += asList(l).length; });
      if (deck.fams.length) html.push('<div class="lbl">families laid</div><div class="big" data-testid="laid-total">' + laidTotal + " / " + deck.fams.length + "</div>");
    }
    if (D.match || f.hand > 1) html.push('<div class="lbl" data-testid="hand-game">hand ' + esc(f.hand) + " · " + esc(f.game) + "</div>");
    setHTML(el.centreInfo, html.join(""));
  }

  function badge(cls, text, title) {
    return '<span class="badge ' + cls + '" data-testid="badge-' + cls + '"' + (title ? ' title="' + esc(title) + '"' : "") + ">" + esc(text) + "</span>";
  }

  function scoresHTML(scores, ranks) {
    if (!scores) return "";
    return '<div class="scores">' + scores.map(function (sc, s) {
      if (sc === null || sc === undefined) return "";
      return '<span class="rchip">' + (ranks && ranks[s] ? '<span class="rk">#' + ranks[s] + "</span>" : "") + esc(seatName(s)) + " <b>" + num(sc) + "</b></span>";
    }).join("") + "</div>";
  }

  function eventHTML(f, st) {
    var body = [];
    var extra = [];
    var rules = D.rules || {};
    switch (f.kind) {
      case "start":
        if (D.kind === "chickens") body.push("The game starts: every seat holds the same 8 cards");
        else body.push((f.hand > 1 || D.match ? "Hand " + esc(f.hand) + ": " : "") + "cards dealt" +
          (typeof st.dealer === "number" ? ", dealer " + who(st.dealer) : ""));
        break;
      case "ask": {
        body.push(who(f.actor) + ' <span class="arrow">asks</span> ' + who(f.target) + ' <span class="arrow">for</span>');
        if (f.ask && f.ask.card) body.push(cardHTML(f.ask.card));
        else if (f.ask && f.ask.family) body.push("family " + familyHTML(f.ask.family));
        var rudeTitle = "the politeness rule: an ask without please is rude; nothing moves and the turn goes to the asked seat";
        if (rules.please) body.push(f.please ? badge("please", "please") : badge("rude", "no please: rude ask", rudeTitle));
        if (f.rude && !(rules.please && !f.please)) body.push(badge("rude", "rude ask", rudeTitle));
        if (f.hit === true) {
          body.push(badge("hit", "hit"));
          var got = asList(f.cards);
          if (got.length) extra.push('<div class="ebody">' + who(f.actor) + " gets " + got.map(function (c) { return cardHTML(c, "mini"); }).join("") + "</div>");
        } else if (f.hit === false) body.push(badge("miss", f.rude ? "no card moves" : "miss"));
        break;
      }
      case "laid": {
        var fam = laidFamily(f);
        body.push(who(f.actor) + " lays " + (fam ? "family " + familyHTML(fam) : "a family"));
        body.push(asList(f.cards).map(function (c) { return cardHTML(c, "mini"); }).join(""));
        break;
      }
      case "draw":
        body.push(who(f.actor) + " draws from the stock");
        body.push(asList(f.cards).map(function (c) { return canSee(f.actor) ? cardHTML(c, "mini") : backHTML(); }).join("") || "");
        break;
      case "play":
        body.push(who(f.actor) + " plays a hidden card");
        if (canSee(f.actor)) body.push(asList(f.cards).map(function (c) { return cardHTML(c, "mini"); }).join(""));
        break;
      case "reveal": {
        body.push("Cards revealed:");
        var c = f.cards;
        if (Array.isArray(c) && c.length === nSeats) {
          c.forEach(function (card, s) { if (card) body.push('<span class="rchip">' + esc(seatName(s)) + " " + cardHTML(card, "mini") + "</span>"); });
        } else body.push(asList(c).map(function (x) { return cardHTML(x, "mini"); }).join(""));
        break;
      }
      case "take":
        body.push(who(f.actor) + " takes " + asList(f.cards).map(function (c) { return cardHTML(c, "mini"); }).join(""));
        break;
      case "round":
        // a round event starts its round (protocol: it carries the new round's number)
        if (typeof st.round === "number" && st.round > 1) body.push("Round " + esc(st.round - 1) + " is over; round " + esc(st.round) + " begins");
        else body.push("Round " + esc(typeof st.round === "number" ? st.round : "") + " begins");
        extra.push(scoresHTML(st.scores));
        break;
      case "fault":
        body.push(who(f.actor) + " faulted");
        break;
      case "retry":
        body.push(who(f.actor) + " sent a bad reply: forgiven, asked again");
        break;
      case "end": {
        var end = f.end || {};
        body.push((D.match ? "Hand " + esc(f.hand) + " ends" : "The game ends"));
        if (end.reason) body.push(badge(end.reason, end.reason, end.detail || ""));
        if (end.detail) extra.push('<div class="detail" data-testid="end-detail">' + esc(end.detail) + "</div>");
        extra.push(scoresHTML(end.scores || st.scores, end.ranks));
        break;
      }
      default:
        body.push(esc(f.kind));
    }
    if (f.fault) {
      body.push(badge("fault", f.fault.fault, "the seat faulted"));
      extra.push('<div class="detail" data-testid="fault-detail">' + esc(f.fault.detail || "") +
        " — the referee's fallback plays this seat from here on</div>");
    }
    if (f.retry) {
      body.push(badge("retry", "retry: " + f.retry.fault + (typeof f.retry.left === "number" ? " (" + f.retry.left + " left)" : ""), "a bad reply was forgiven; the bot was asked again"));
      if (f.retry.detail) extra.push('<div class="detail" data-testid="retry-detail">' + esc(f.retry.detail) + "</div>");
    }
    if (f.fallback) body.push(badge("fallback", "fallback move", "chosen by the referee's fallback player, not the bot"));
    if (typeof f.think_ms === "number") body.push(badge("think", "thought " + ms(f.think_ms), "measured think time of this reply"));

    var head = '<div class="ehead"><span class="ekind">' + esc(KIND_LABEL[f.kind] || f.kind) + "</span><span>step " + cur + " of " + last + "</span>" +
      (D.match ? "<span>hand " + esc(f.hand) + "</span>" : "") + "</div>";
    var text = view === "all" && f.text ? '<div class="etext" data-testid="event-text">' + esc(f.text) + "</div>" : "";
    return head + '<div class="ebody">' + body.join(" ") + "</div>" + extra.join("") + text;
  }

  function render() {
    var f = frames[cur], st = stateAt(cur);
    el.app.dataset.frame = String(cur);
    el.counter.dataset.frame = String(cur);
    el.counter.textContent = "step " + cur + " / " + last;
    el.handno.textContent = D.match || f.hand > 1 ? "hand " + f.hand + " · " + f.game : "";
    el.scrubber.value = String(cur);
    el.btnStart.disabled = el.btnPrev.disabled = cur === 0;
    el.btnEnd.disabled = el.btnNext.disabled = cur === last;
    for (var s = 0; s < nSeats; s++) renderSeat(s, f, st);
    renderCentre(f, st);
    el.event.dataset.kind = f.kind;
    el.event.innerHTML = eventHTML(f, st);
    var old = el.log.querySelector("li.current");
    if (old) old.classList.remove("current");
    var li = logItems[cur];
    if (li) {
      li.classList.add("current");
      var box = el.log;
      if (li.offsetTop < box.scrollTop || li.offsetTop + li.offsetHeight > box.scrollTop + box.clientHeight) {
        box.scrollTop = Math.max(0, li.offsetTop - box.clientHeight / 2);
      }
    }
  }

  // ---------------------------------------------------------------- navigation
  function go(k, keepPlaying) {
    if (!keepPlaying) pause();
    cur = Math.max(0, Math.min(last, k | 0));
    render();
    if (!keepPlaying) saveUrl();
  }

  // the step and the seat view in the page's URL (?step=N&view=S, the game kept), so a view can be
  // shared as a link and a reload shows the same view; while playing, only where it stops is written
  function saveUrl() {
    try {
      var p = new URLSearchParams(window.location.search);
      if (cur === 0) p.delete("step"); else p.set("step", String(cur));   // defaults are left out
      if (view === "all") p.delete("view"); else p.set("view", String(view));
      var hash = /^#\d+$/.test(window.location.hash) ? "" : window.location.hash;
      var q = p.toString();
      window.history.replaceState(null, "", window.location.pathname + (q ? "?" + q : "") + hash);
    } catch (e) { /* a browser that refuses: the view is just not in the URL */ }
  }
  function interval() { return BASE_MS / (parseFloat(el.speed.value) || 1); }
  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(function () {
      if (!playing) return;
      if (cur >= last) { pause(); return; }
      go(cur + 1, true);
      if (cur >= last) pause(); else schedule();
    }, interval());
  }
  function setPlayButton() {
    el.btnPlay.dataset.state = playing ? "playing" : "paused";
    el.btnPlay.setAttribute("aria-label", playing ? "pause" : "play");
    el.app.dataset.playing = String(playing);
  }
  function play() {
    if (cur >= last) go(0);
    playing = true;
    setPlayButton();
    schedule();
  }
  function pause() {
    var was = playing;
    playing = false;
    clearTimeout(timer);
    timer = null;
    if (el.btnPlay) setPlayButton();
    if (was) saveUrl();
  }
  function toggle() { if (playing) pause(); else play(); }

  function onKey(e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var t = e.target, tag = t && t.tagName;
    if (tag === "SELECT" || tag === "TEXTAREA") return;
    if (tag === "INPUT" && t.type !== "range" && t.type !== "checkbox") return;
    if (tag === "INPUT" && t.type === "checkbox" && e.key === " ") return; // space ticks the box
    if (tag === "INPUT" && t.type === "range" && /^(Arrow|Home$|End$|Page)/.test(e.key)) return; // the range steps itself
    switch (e.key) {
      case "ArrowRight": go(cur + 1); break;
      case "ArrowLeft": go(cur - 1); break;
      case "Home": go(0); break;
      case "End": go(last); break;
      case "PageDown": go(cur + 10); break;
      case "PageUp": go(cur - 10); break;
      case " ": case "Spacebar": toggle(); break;
      default: return;
    }
    e.preventDefault();
  }

  function wire() {
    el.btnStart.addEventListener("click", function () { go(0); });
    el.btnPrev.addEventListener("click", function () { go(cur - 1); });
    el.btnNext.addEventListener("click", function () { go(cur + 1); });
    el.btnEnd.addEventListener("click", function () { go(last); });
    el.btnPlay.addEventListener("click", toggle);
    el.scrubber.addEventListener("input", function () { go(parseInt(el.scrubber.value, 10)); });
    el.speed.addEventListener("change", function () { if (playing) schedule(); });
    el.view.addEventListener("change", function () {
      view = el.view.value === "all" ? "all" : parseInt(el.view.value, 10);
      el.app.dataset.view = String(view);
      layoutSeats();
      render();
      saveUrl();
    });
    el.filter.addEventListener("change", function () { el.log.classList.toggle("marked-only", el.filter.checked); });
    el.log.addEventListener("click", function (e) {
      var li = e.target.closest("li[data-i]");
      if (li) go(parseInt(li.dataset.i, 10));
    });
    document.addEventListener("keydown", onKey);
    // space on a focused button must not also click it (it toggles play instead)
    document.addEventListener("keyup", function (e) {
      if (e.key === " " && e.target && e.target.tagName === "BUTTON") e.preventDefault();
    });
  }

  function initialView() {
    var v = new URLSearchParams(window.location.search).get("view");
    var s = v === null ? NaN : parseInt(v, 10);
    return /^\d+$/.test(v || "") && s < nSeats ? s : "all";
  }

  function initialStep() {
    var params = new URLSearchParams(window.location.search);
    var v = params.get("step");
    var h = window.location.hash.replace(/^#/, "");
    if (v === null && /^\d+$/.test(h)) v = h;
    var k = v === null ? 0 : parseInt(v, 10);
    return isFinite(k) ? k : 0;
  }

  // ?text=1: the game as plain text (what the report's "log" link opens: a browser shows it, where the
  // .jsonl.zst log itself would be downloaded): the header, then one line per step, as the event log says it
  function showText() {
    try { buildHeader(); } catch (e) { /* the text below still says everything */ }
    var lines = [];
    lines.push("game " + D.game + " (" + (D.variant || "") + "), " + nSeats + " seats, seed " + D.seed +
      (D.verified === true ? ", verified by replay" : ", NOT verified by replay" + (D.mismatch ? ": " + D.mismatch : "")));
    D.seats.forEach(function (seat, s) { lines.push("seat " + s + ": " + seat.bot); });
    var r = D.result || {};
    if (r.scores) lines.push("result (" + r.reason + "): scores " + JSON.stringify(r.scores) + ", places " + JSON.stringify(r.ranks) +
      (r.forfeits && r.forfeits.length ? ", forfeited seats " + JSON.stringify(r.forfeits) : ""));
    lines.push("");
    frames.forEach(function (f) {
      var extra = f.fault ? " [fault " + f.fault.fault + ": " + (f.fault.detail || "") + "]" : "";
      if (f.retry) extra += " [retry " + f.retry.fault + ": " + (f.retry.detail || "") + "]";
      if (typeof f.think_ms === "number") extra += " (" + f.think_ms + " ms)";
      lines.push("step " + f.i + " [" + f.kind + "] " + f.text + extra);
    });
    lines.push("", "The full log (every message the referee sent and received, JSON Lines) is " + D.game +
      ".jsonl.zst beside this page: `zstd -dc` or `referee replay` reads it, and `referee serve` shows it as text at /log/" + D.game + ".");
    var pre = document.createElement("pre");
    pre.className = "game-text";
    pre.id = "game-text";
    pre.setAttribute("data-testid", "game-text");
    pre.tabIndex = 0;
    pre.textContent = lines.join("\n") + "\n";
    var back = document.createElement("a");
    var p = new URLSearchParams(window.location.search);
    p.delete("text");
    back.href = "?" + p.toString();
    back.textContent = "show the game at the table";
    back.setAttribute("data-testid", "to-table");
    var box = document.createElement("main");
    box.className = "text-main";
    box.append(back, pre);
    el.main.replaceWith(box);
    el.app.dataset.ready = "true";
    el.app.dataset.mode = "text";
  }

  function start(data) {
    var problem = check(data);
    if (problem) { showError(problem); return; }
    if (data.version === 2) {  // the game's events: expanded into the frames shown (expand.js)
      try { data = window.refereeExpand.expand(data); } catch (e) {
        showError("the game's events could not be read (" + (e && e.message ? e.message : e) + ")");
        return;
      }
      if (!data.frames.length) { showError("the game data has no frames"); return; }
    }
    D = data;
    frames = D.frames;
    nSeats = D.seats.length;
    last = frames.length - 1;
    deck = buildDeck();
    if (new URLSearchParams(window.location.search).get("text") === "1") { showText(); return; }
    try {
      precompute();
      buildHeader();
      el.felt.classList.add("seats-" + nSeats);
      buildSeats();
      buildViewSelect();
      view = initialView();
      el.view.value = String(view);
      layoutSeats();
      buildLog();
      buildTicks();
      el.scrubber.max = String(last);
      wire();
      el.main.hidden = false;
      el.help.hidden = false;
      el.app.dataset.view = String(view);
      go(initialStep());
    } catch (e) {
      showError("the game data could not be shown (" + (e && e.message ? e.message : e) + ")");
      return;
    }
    el.app.dataset.ready = "true";
    window.refereeViewer = { go: go, state: stateAt, get step() { return cur; }, get steps() { return frames.length; } };
  }

  function init() {
    el = {
      app: $("app"), main: $("main"), error: $("load-error"), help: $("help"),
      gameId: $("game-id"), variant: $("variant"), verified: $("verified"), meta: $("meta"), result: $("result"),
      felt: $("felt"), rowTop: $("row-top"), rowBottom: $("row-bottom"), centreInfo: $("centre-info"), event: $("event"),
      btnStart: $("btn-start"), btnPrev: $("btn-prev"), btnPlay: $("btn-play"), btnNext: $("btn-next"), btnEnd: $("btn-end"),
      counter: $("frame-counter"), handno: $("handno"), scrubber: $("scrubber"), ticks: $("ticks"),
      speed: $("speed"), view: $("view-select"), log: $("log"), logTotal: $("log-total"), filter: $("log-filter")
    };
    load();
  }

  init();
})();
