// A starter bot in Go (1.19+, standard library only): random legal moves, every variant.
// The referee writes one JSON object per line to stdin; answer `hello` with a hello and every
// `turn` with one line echoing its `id`; nothing else needs an answer. Exit on `bye` or at end of
// input. Debug output goes to stderr only (log.Printf).
package main

import (
	"bufio"
	"encoding/json"
	"log"
	"math/rand"
	"os"
	"time"
)

type message struct {
	Type    string   `json:"type"`
	ID      int      `json:"id"`
	Decide  string   `json:"decide"`
	Options []string `json:"options"`
	Targets []int    `json:"targets"`
	Fault   string   `json:"fault"`
	Detail  string   `json:"detail"`
	Rules   *struct {
		Ask    string `json:"ask"`
		Please bool   `json:"please"`
	} `json:"rules"`
}

func main() {
	rand.Seed(time.Now().UnixNano())
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout) // Encode writes one line and is unbuffered: no flush needed
	askMode, please := "card", false
	for in.Scan() {
		var msg message
		if err := json.Unmarshal(in.Bytes(), &msg); err != nil {
			log.Printf("not JSON: %v", err)
			continue
		}
		switch msg.Type {
		case "hello":
			out.Encode(map[string]any{"type": "hello", "protocol": 1, "name": "GoStarter", "version": "1"})
		case "start":
			if msg.Rules != nil {
				askMode, please = msg.Rules.Ask, msg.Rules.Please
			}
		case "turn":
			// replace these random choices with your strategy
			choice := msg.Options[rand.Intn(len(msg.Options))]
			if msg.Decide != "ask" {
				out.Encode(map[string]any{"type": msg.Decide, "id": msg.ID, "card": choice})
				continue
			}
			reply := map[string]any{"type": "ask", "id": msg.ID, "target": msg.Targets[rand.Intn(len(msg.Targets))]}
			if askMode == "family" {
				reply["family"] = choice
			} else {
				reply["card"] = choice
			}
			if please {
				reply["please"] = true
			}
			out.Encode(reply)
		case "error":
			log.Printf("referee error: %s %s", msg.Fault, msg.Detail)
		case "bye":
			return
		}
	}
}
