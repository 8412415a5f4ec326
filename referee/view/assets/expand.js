/* card-referee viewer data, version 2 -> version 1 (docs/VIEWER-FORMAT.md): expands a game's recorded public
   events into exactly the frames the version 1 builder (referee/view/frames.py, _Frames) makes, so the viewer
   (viewer.js) shows version 1 frames whichever version a page holds. Loaded before viewer.js; also run by node
   in the tests (module.exports). window.refereeExpand = { Expander, expand }. */
(function (root) {
  "use strict";

  var FRAME = ["i", "hand", "game", "kind", "text", "actor", "target", "ask", "please", "hit", "rude", "cards",
    "fallback", "think_ms", "fault", "retry", "end", "state"];
  var ENDS = {
    complete: "ends",
    stalled: "ends by the stalemate rule (no card moved for too long)",
    aborted: "is aborted"
  };

  function nil(x) { return x === undefined ? null : x; }
  // Python's == on plain JSON values (lists of strings, numbers, booleans, null)
  function same(a, b) { a = nil(a); b = nil(b); return a === b || JSON.stringify(a) === JSON.stringify(b); }
  // Python's str() of a JSON value inside a text
  function py(x) {
    if (x === null || x === undefined) return "None";
    if (x === true) return "True";
    if (x === false) return "False";
    if (Array.isArray(x)) return "[" + x.map(pyRepr).join(", ") + "]";
    return String(x);
  }
  function pyRepr(x) { return typeof x === "string" ? "'" + x + "'" : py(x); }
  function signed(v) { return v >= 0 ? "+" + v : String(v); }
  function copy(o) { var r = {}; for (var k in o) r[k] = o[k]; return r; }
  function assign(o, more) { for (var k in more) o[k] = more[k]; return o; }
  function given(x) { return x !== undefined && x !== null; }

  function Expander(head) {
    var t = head.deck || { cards: [] };
    this.n = head.players;
    this.chickens = head.kind === "chickens";
    this.names = head.seats.map(function (s) { return s.bot; });
    this.order = {};
    this.family = {};
    for (var i = 0; i < t.cards.length; i++) {
      this.order[t.cards[i]] = i;
      if (t.families) this.family[t.cards[i]] = t.families[i];
    }
    this.points = given(t.points) ? t.points : 1;
    this.polite = !!t.polite;
    this.values = t.values || {};
    this.frames = [];
    this.full = {};
    this.hands = [];
    this.handNo = 0;
    this.gid = null;
    this.hseats = [];
    this.early = [];
  }

  Expander.prototype.sorted = function (cards) {
    var order = this.order;
    function at(c) { return Object.prototype.hasOwnProperty.call(order, c) ? order[c] : 1 << 30; }
    return cards.slice().sort(function (a, b) { return at(a) - at(b); });
  };

  Expander.prototype.frame = function (kind, text, extra, patch) {
    var f = {};
    FRAME.forEach(function (k) { f[k] = null; });
    f.i = this.frames.length;
    f.hand = this.handNo;
    f.game = this.gid;
    f.kind = kind;
    f.text = text;
    f.fallback = false;
    if (extra) assign(f, extra);
    f.state = patch;
    this.frames.push(f);
  };

  // a frame whose state changes by `changes` (hands: seat -> new hand); the patch keeps what differs
  Expander.prototype.put = function (kind, text, changes, extra) {
    var full = this.full, patch = {}, self = this;
    Object.keys(changes).forEach(function (k) {
      var v = changes[k];
      if (k === "hands") {
        var changed = {}, any = false;
        Object.keys(v).forEach(function (i) {
          if (!same(v[i], self.hands[i])) { self.hands[i] = v[i]; changed[String(i)] = v[i]; any = true; }
        });
        if (any) patch.hands = changed;
      } else if (!same(full[k], v)) {
        full[k] = v;
        patch[k] = v;
      }
    });
    this.frame(kind, text, extra, patch);
  };

  Expander.prototype.push = function (r) {
    var before = this.frames.length;
    switch (r[0]) {
      case "S": this.start(r[1], r[2], r[3]); break;
      case "A": if (this.chickens) this.chickensAction(r); else this.ask(r); break;
      case "F": this.fault(r); break;
      case "R": this.retry(r[1], r[2], r[3], r[4]); break;
      case "E": this.end(r[1], r[2], r[3], r[4]); break;
      default: break;
    }
    return this.frames.slice(before);
  };

  Expander.prototype.start = function (gid, hseats, snap) {
    var names = this.names;
    this.handNo += 1;
    this.gid = gid;
    this.hseats = hseats;
    var who = hseats.map(function (i) { return names[i]; }).join(", ");
    var what = this.handNo > 1 && hseats.length < this.n ? "a tie-break hand" : "the cards are dealt";
    var text = "hand " + this.handNo + " (" + gid + "): " + what + "; seats " + who;
    var hands = {}, rest = {};
    snap.hands.forEach(function (h, i) { hands[String(i)] = h; });
    Object.keys(snap).forEach(function (k) { if (k !== "hands") rest[k] = snap[k]; });
    if (!this.frames.length) {
      this.hands = snap.hands.slice();
      this.full = assign({ hands: this.hands }, rest);
      this.frame("start", text, null, assign({ hands: hands }, rest));
    } else {
      this.put("start", text, assign({ hands: hands }, rest));
    }
    var early = this.early;
    this.early = [];
    for (var k = 0; k < early.length; k++) this.fault(early[k]);
  };

  // after an action's last event: the seats awaited (and the turn; chickens: who has played face down)
  Expander.prototype.shown = function (pending, decision) {
    var hs = this.hseats;
    var waiting = pending.map(function (p) { return hs[p]; });
    if (!this.chickens) return { waiting: waiting, turn: waiting.length ? waiting[0] : null };
    var playing = decision === "play", played = [];
    for (var i = 0; i < this.n; i++) played.push(playing && waiting.indexOf(i) < 0);
    return { waiting: waiting, played: played, turn: waiting.length === 1 && decision === "take" ? waiting[0] : null };
  };

  function actor(self, r) {
    var name = self.names[r[1]];
    return {
      who: r[4] ? name + " (the referee's fallback)" : name,
      common: { actor: r[1], fallback: !!r[4], think_ms: nil(r[5]) }
    };
  }

  Expander.prototype.ask = function (r) {
    var events = r[3], pending = r[6], playing = r[7];
    var a = actor(this, r), hs = this.hseats, names = this.names, hands = this.hands, full = this.full;
    var last = events.length - 1, then = "";
    for (var k = 0; k < events.length; k++) {
      var ev = events[k], kind = ev.kind, changes, extra, text, s, counts;
      if (kind === "ask") {
        s = hs[ev.seat];
        var t = hs[ev.target];
        var cards = ev.cards || [];
        if (cards.length) {
          counts = full.counts.slice();
          counts[t] -= cards.length;
          counts[s] += cards.length;
          var moved = {};
          moved[t] = hands[t].filter(function (c) { return cards.indexOf(c) < 0; });
          moved[s] = this.sorted(hands[s].concat(cards));
          changes = { hands: moved, counts: counts };
        } else {
          cards = [];
          changes = {};
        }
        var card = ev.card;
        var what = card || ev.family;
        var please = this.polite && !!ev.please;
        var rude = !!ev.rude;
        var result = rude ? "rude (no please): nothing moves" : cards.length ? "hit: gets " + cards.join(", ") : "miss";
        var turnTo = given(ev.next) ? "; " + names[hs[ev.next]] + " asks next" : "";
        if (k !== last) { then = turnTo; turnTo = ""; }
        extra = assign(copy(a.common), {
          target: t, ask: card ? { card: what } : { family: what }, please: please, hit: cards.length > 0,
          rude: rude, cards: cards
        });
        text = a.who + " asks " + names[t] + " for " + py(what) + (please ? " please" : "") + ": " + result + turnTo;
      } else if (kind === "laid") {
        s = hs[ev.seat];
        var fam = ev.family, family = this.family, held = hands[s];
        var members = held.filter(function (c) { return family[c] === fam; });
        counts = full.counts.slice();
        counts[s] -= members.length;
        var laid = full.laid.slice();
        laid[s] = laid[s].concat([fam]);
        var scores = full.scores.slice();
        scores[s] += this.points;
        var kept = {};
        kept[s] = held.filter(function (c) { return members.indexOf(c) < 0; });
        changes = { hands: kept, counts: counts, laid: laid, scores: scores };
        extra = { actor: s, cards: members };
        text = names[s] + " lays family " + fam + " (+" + this.points + ")" + (k === last ? then : "");
      } else if (kind === "draw") {
        s = hs[ev.seat];
        var drawn = nil(ev.card);
        counts = full.counts.slice();
        counts[s] += 1;
        changes = { counts: counts, stock: (full.stock || 1) - 1 };
        if (drawn !== null) {
          var got = {};
          got[s] = this.sorted(hands[s].concat([drawn]));
          changes.hands = got;
        }
        extra = { actor: s, cards: drawn ? [drawn] : null };
        text = names[s] + " draws a card from the stock" + (k === last ? then : "");
      } else {
        changes = {};
        extra = {};
        text = String(kind);
      }
      if (k === last) assign(changes, this.shown(pending, ""));
      else if (playing) changes.waiting = [];  // no seat is awaited between the events of one action
      this.put(kind, text, changes, extra);
    }
  };

  Expander.prototype.chickensAction = function (r) {
    var seat = r[1], decide = r[2], events = r[3], pending = r[6], playing = r[7];
    var card = r[8], decision = r[9], terminal = r[10], snap = r[11];
    var a = actor(this, r), full = this.full, names = this.names, self = this;
    var roundOver = terminal || events.some(function (ev) { return ev.kind === "round"; });
    function between(changes) { if (playing) changes.waiting = []; return changes; }
    if (decide === "play") {
      var played = full.played.slice();
      played[seat] = true;
      var changes0 = { played: played };
      if (!events.length) assign(changes0, this.shown(pending, decision));
      else between(changes0);
      this.put("play", a.who + " plays a card face down", changes0, assign(copy(a.common), { cards: [card] }));
    }
    var last = events.length - 1;
    for (var k = 0; k < events.length; k++) {
      var ev = events[k], kind = ev.kind, final = k === last && !roundOver, changes, extra, text;
      if (kind === "reveal") {
        var plays = ev.plays, hands = this.hands, fresh = {};
        var counts = full.counts.slice();
        plays.forEach(function (c, s) {
          fresh[s] = hands[s].filter(function (x) { return x !== c; });
          counts[s] = fresh[s].length;
        });
        var falses = [];
        for (var i = 0; i < this.n; i++) falses.push(false);
        changes = { hands: fresh, counts: counts, centre: ev.centre.slice(), played: falses };
        var shown = plays.map(function (c, s) { return names[s] + " " + py(c); }).join(", ");
        text = "reveal: " + shown + "; centre: " + (ev.centre.join(", ") || "empty");
        extra = { cards: plays.slice() };
      } else if (kind === "take") {
        var s = ev.seat, c = ev.card;
        var value = Object.prototype.hasOwnProperty.call(this.values, c) ? this.values[c] : 0;
        var laid = full.laid.slice();
        laid[s] = laid[s].concat([c]);
        var scores = full.scores.slice();
        scores[s] += value;
        changes = { laid: laid, scores: scores, centre: ev.centre.slice() };
        extra = s === seat ? assign(copy(a.common), { cards: [c] }) : { actor: s, cards: [c] };
        text = (s !== seat ? names[s] : a.who) + " takes " + c + " (" + signed(value) + ")";
      } else if (kind === "round") {
        var next = {}, handsNow = {};
        snap.hands.forEach(function (h, j) { handsNow[String(j)] = h; });
        Object.keys(snap).forEach(function (key) { next[key] = key === "hands" ? handsNow : snap[key]; });
        text = "round " + ev.round + ": leader " + names[ev.leader] + ", commissioner " + names[ev.commissioner] +
          "; scores " + py(ev.scores);
        self.put("round", text, next);
        continue;
      } else {
        continue;
      }
      if (final) assign(changes, this.shown(pending, decision));
      else between(changes);
      this.put(kind, text, changes, extra);
    }
  };

  Expander.prototype.fault = function (r) {
    if (!this.frames.length) { this.early.push(r); return; }  // before the start frame: shown right after it
    var faulted = (this.full.faulted || []).slice();
    if (faulted.indexOf(r[1]) < 0) faulted.push(r[1]);
    faulted.sort(function (x, y) { return x - y; });
    this.put("fault", r[2] + " faults (" + r[3] + "): " + r[5], { faulted: faulted },
      { actor: r[1], fault: { fault: r[3], detail: r[4] } });
  };

  Expander.prototype.retry = function (seat, fault, detail, left) {
    this.put("retry", this.names[seat] + "'s reply is refused (" + fault + "); it may try again (" + left + " more " +
      (left === 1 ? "retry" : "retries") + " after this one)", {},
      { actor: seat, retry: { fault: fault, detail: detail, left: left } });
  };

  Expander.prototype.end = function (scores, ranks, reason, detail) {
    var names = this.names;
    var what = Object.prototype.hasOwnProperty.call(ENDS, reason) ? ENDS[reason] : reason;
    var shown = this.hseats.map(function (i, hs) { return names[i] + " " + py(scores[hs]); }).join(", ");
    this.put("end", "hand " + this.handNo + " " + what + ": " + shown + (detail ? " (" + detail + ")" : ""),
      { waiting: [], turn: null }, { end: { scores: scores.slice(), ranks: ranks.slice(), reason: reason, detail: nil(detail) } });
  };

  // a version 2 document as the version 1 document of the same game (the same header, result and frames)
  function expand(doc) {
    var x = new Expander(doc);
    doc.events.forEach(function (r) { x.push(r); });
    var out = {};
    Object.keys(doc).forEach(function (k) { if (k !== "events" && k !== "deck") out[k] = doc[k]; });
    out.version = 1;
    out.frames = x.frames;
    return out;
  }

  var api = { Expander: Expander, expand: expand };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.refereeExpand = api;
})(this);
