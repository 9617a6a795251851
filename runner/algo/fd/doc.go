// Package fd is the heartbeat failure detector of seed 004 ("Heartbeat"),
// shared by dmx's election algorithms. It is not a Machine: a machine embeds
// a Detector, hands it every input, and carries out the outputs it returns
// along with its own.
//
// Seed 004, as written:
//
//	Send "beat" every T seconds.
//	Declared dead if not observed in last T+D seconds.
//	  D too small  => inaccurate: alive reported dead
//	  D too large  => incomplete: dead reported alive (zombies!)
//	We can only suspect a crash!
//
// Here T is the parameter fd-period and D the parameter fd-allowance (both
// 20ms by default). A Detector at P_i sends a "heartbeat" message to every
// other process every T, and suspects P_j when nothing at all (a heartbeat
// or any other message) has come from P_j for T+D: it outputs Suspect{To: j},
// which the runtime records as a "suspect" event. Any later message from P_j
// reverses the suspicion with Trust{To: j} (a "trust" event): the detector
// only suspects, as the seed says, and a suspicion that is reversed was a
// false one. A D smaller than the spread of message delays makes such false
// suspicions, visible in the trace as suspect/trust pairs about a process
// that never crashed.
//
// The caller's duties, in order, for each input of its machine:
//
//  1. Start or Recover: call Start(now) (a restarted process has a fresh
//     detector: it suspects nobody and counts silence from its restart).
//  2. Deliver: call Step first; every delivery counts as a sign of life of
//     its sender. If Step reports the input as the detector's own (a
//     heartbeat), the machine does nothing else with it.
//  3. Timer: call Step; the detector's timers are named TimerBeat and
//     TimerCheck and must not be used by the machine.
//  4. Look at the Suspect and Trust outputs (or call Suspected) to react,
//     e.g. start an election when the leader is suspected.
//
// fd-period=0 turns the detector off: no heartbeat is sent and nobody is
// ever suspected. Tests that count an algorithm's messages use it.
//
// Time: the detector reads Input.Now and keeps one check timer armed for the
// earliest moment a process may become suspect, so that a suspicion is
// output exactly T+D after the last sign of life, not at the next beat.
//
// fd-stall=discount counts silence only while the process itself runs. A
// real process can be off the CPU for longer than T+D on a busy machine
// (or paused); its timers then fire late, every other process seems
// silent, and their messages of that time wait unread in its socket. When
// all of them were off the CPU together, the first to run again suspects
// every other one. With discount, a detector timer that fires later than
// it was due shows how long the process was away, and that time is not
// counted as anyone's silence: a suspicion comes T+D of the detector's own
// running time after the last sign of life. dmx run starts from discount;
// the default, count, is seed 004 as written, and what the simulator (whose
// timers fire when due, unless a pause holds them) and the scripted tests
// (which fire timers when they please) keep.
package fd
