#!/usr/bin/env node
// A starter bot in JavaScript (Node.js 16+, no dependencies): random legal moves, every variant.
// The referee writes one JSON object per line to stdin; answer `hello` with a hello and every
// `turn` with one line echoing its `id`; nothing else needs an answer. Exit on `bye` or at end of
// input. Debug output goes to stderr only (console.error).
"use strict";

const readline = require("readline");

let rules = {};
const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
const pick = (list) => list[Math.floor(Math.random() * list.length)];

function reply(turn) {
  // replace these random choices with your strategy
  const choice = pick(turn.options);
  if (turn.decide !== "ask") return { type: turn.decide, id: turn.id, card: choice };
  const msg = { type: "ask", id: turn.id, target: pick(turn.targets) };
  msg[rules.ask === "family" ? "family" : "card"] = choice;
  if (rules.please) msg.please = true;
  return msg;
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    console.error(`not JSON: ${line.slice(0, 200)}`);
    return;
  }
  if (msg.type === "hello") send({ type: "hello", protocol: 1, name: "NodeStarter", version: "1" });
  else if (msg.type === "start") rules = msg.rules || {};
  else if (msg.type === "turn") send(reply(msg));
  else if (msg.type === "error") console.error(`referee error: ${msg.fault} ${msg.detail}`);
  else if (msg.type === "bye") process.exit(0);
});
rl.on("close", () => process.exit(0));
