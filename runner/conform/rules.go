package conform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dmxlab/dmx/runner/algo"
)

// rules name, for the algorithms whose course notes number their rules or
// state them plainly, the rule that decides what the machine does with an
// input: the rule a program that differs there broke. Keyed by algorithm,
// then by the input ("request", "release", "start", "recover", "timer",
// or "receive TYPE").
var rules = map[string]map[string]string{
	"ricart-agrawala": {
		"start":           "[RI1] state := RELEASED (seed 003)",
		"recover":         "[RI1] state := RELEASED (seed 003)",
		"request":         "[RA1] state := REQUESTED, T_Pi := the local clock; [RA2] send the request (T_Pi, i) to all other processes (seed 003)",
		"receive request": "[RH1] if state = HELD, or REQUESTED with (T_Pi, i) < (T_Pj, j), queue the request without replying, else reply at once (seed 003)",
		"receive reply":   "[RA3] wait for the replies of all other n-1 processes; [RE1] then state := HELD, enter the CS (seed 003)",
		"release":         "exit: state := RELEASED, reply to every queued request (seed 004 \"To exit mutex\")",
	},
	"ra-token": {
		"start":           "[RI1] only P_x starts TOKEN-PRESENT; [RI2] token[k] := request[k] := 0 (seed 001)",
		"recover":         "[RI1], [RI2]: a restarted process has no token (seed 001)",
		"request":         "[RA1] without the token, send the request (T_Pi, i) to all other processes; with it, enter at once (seed 001)",
		"receive request": "[RH1] request[j] := max(request[j], T_Pj); [RH2] if TOKEN-PRESENT, release the token as in [RR2] (seed 001)",
		"receive token":   "[RA1] with the token: state := TOKEN-HELD, enter the CS (seed 001)",
		"release":         "[RR1] state := TOKEN-PRESENT; [RR2] send the token to the first P_k after P_i with request[k] > token[k] (seed 001)",
	},
	"central": {
		"request":         "seed 003 slide 5: a client sends a request to the coordinator and waits for its reply; the coordinator's own request is local (slide 6)",
		"receive request": "seed 000: the coordinator grants if nobody holds the resource, else queues the request and does not reply until release",
		"receive release": "seed 000: at a release the coordinator grants the head of its queue (FIFO)",
		"receive grant":   "seed 003 slide 5: the coordinator's reply gives the right to enter the CS",
		"release":         "seed 003 slide 5: after the CS the process notifies the coordinator with a release message",
	},
	"lamport": {
		"request":         "seed 002: multicast the timestamped request to every process and queue it",
		"receive request": "seed 002: queue the request and send a timestamped acknowledgement",
		"receive ack":     "seed 002: enter once the own request heads the queue and a later message came from every other process",
		"receive release": "seed 002: remove the releaser's request from the queue; enter if the own request now heads it",
		"release":         "seed 002: remove the own request and multicast a release",
	},
}

// RuleOf names the rule of spec's algorithm that decides what its machine
// does with in: the notes' rule where the table has one, else the input
// in words.
func RuleOf(spec *algo.Spec, in algo.Input) string {
	key := in.Kind.String()
	if in.Kind == algo.Receive {
		key = "receive " + in.Msg.Type
	}
	if r, ok := rules[spec.Name][key]; ok {
		return r
	}
	if in.Kind == algo.Receive && !slices.Contains(spec.MsgTypes, in.Msg.Type) {
		return fmt.Sprintf("none: %s sends no %q message (its messages: %s)", spec.Name, in.Msg.Type, strings.Join(spec.MsgTypes, ", "))
	}
	return fmt.Sprintf("%s's rule for a %s (dmx list %s quotes the notes' rules)", spec.Name, strings.ReplaceAll(key, "receive ", "received "), spec.Name)
}
