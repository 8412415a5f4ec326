#!/usr/bin/env node
// A random legal bot in plain JavaScript (Node.js 16+, no dependencies).
//
// How to run it:
//     referee check-bot -- node sample_bots/js_bot.js
//     node sample_bots/js_bot.js          (talks the protocol on stdin/stdout)
//
// The protocol in one breath: the referee writes one JSON object per line to our
// stdin; we answer `hello` with our own hello and every `turn` with one reply line
// that echoes the turn's `id`. Everything else (start, event, end, error) needs no
// answer. We stop on `bye` or when stdin closes. Debug output goes to stderr ONLY:
// anything on stdout that is not a protocol message is a fault.
//
// It plays every variant, custom ask variants included: it reads the rules
// (families, members, ask mode, politeness) from `start.rules` and the legal
// choices (`options`, `targets`) from each `turn`, and can work them out from the
// hand and counts when a turn does not carry them.
"use strict";

const readline = require("readline");

const NAME = "JsBot";
let rules = {};   // start.rules of the current game
let seat = 0;     // our seat in the current game

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

function log(...parts) {
  process.stderr.write(parts.join(" ") + "\n");
}

function pick(list) {
  if (!Array.isArray(list) || list.length === 0) throw new Error("nothing to choose from");
  return list[Math.floor(Math.random() * list.length)];
}

// The family of a card is the family name it starts with (the member name follows).
function familyOf(card) {
  const families = rules.families || [];
  const members = rules.members || [];
  for (const f of families) {
    if (card.startsWith(f) && members.includes(card.slice(f.length))) return f;
  }
  return null;
}

function answerAsk(turn) {
  const hand = turn.hand || [];
  const counts = turn.counts || [];
  let targets = turn.targets;
  if (!Array.isArray(targets)) {
    targets = [];
    counts.forEach((n, s) => { if (s !== seat && n > 0) targets.push(s); });
  }
  let options = turn.options;
  if (!Array.isArray(options)) {
    const held = [...new Set(hand.map(familyOf).filter((f) => f !== null))];
    if (rules.ask === "family") {
      options = held;
    } else {
      options = [];
      for (const f of held) {
        for (const m of rules.members || []) {
          if (!hand.includes(f + m)) options.push(f + m);
        }
      }
    }
  }
  const reply = { type: "ask", id: turn.id, target: pick(targets) };
  if (rules.ask === "family") reply.family = pick(options);
  else reply.card = pick(options);
  if (rules.please) reply.please = true;  // politeness rule: always say please
  return reply;
}

function answerChickens(turn) {
  let options = turn.options;
  if (!Array.isArray(options)) options = turn.decide === "play" ? turn.hand : turn.centre;
  return { type: turn.decide, id: turn.id, card: pick(options) };
}

function handle(msg) {
  switch (msg.type) {
    case "hello":
      if (msg.protocol !== 1) log(`referee speaks protocol ${msg.protocol}, this bot speaks 1`);
      send({ type: "hello", protocol: 1, name: NAME, version: "1.0" });
      break;
    case "start":
      rules = msg.rules || {};
      seat = msg.seat;
      break;
    case "turn":
      send(msg.decide === "ask" ? answerAsk(msg) : answerChickens(msg));
      break;
    case "error":
      log(`referee error (${msg.fault}, turn ${msg.id}): ${msg.detail}`);
      break;
    case "bye":
      process.exit(0);
      break;
    default:
      break;  // event, end (reason "complete", "stalled" or "aborted"), and anything new: nothing to answer
  }
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (line) => {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    log(`ignoring a line that is not JSON: ${line.slice(0, 200)}`);
    return;
  }
  if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
    log(`ignoring a line that is not a JSON object: ${line.slice(0, 200)}`);
    return;
  }
  try {
    handle(msg);
  } catch (e) {
    // never die on one bad message: say what went wrong and keep reading
    log(`error while handling a ${msg.type} message: ${e.stack}`);
  }
});
rl.on("close", () => process.exit(0));
