package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"
)

// TestBadInput: every kind of bad input gets one clear line on stderr that
// names what is wrong, exit code 2, and no panic.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	if code, _, errs := dmx(t, "sim", "central", "-n", "3", "--seed", "1", "-o", good); code != 0 {
		t.Fatalf("sim: %s", errs)
	}
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("this is not a trace\n"), 0o644)
	data, _ := os.ReadFile(good)
	truncated := filepath.Join(dir, "truncated.db")
	os.WriteFile(truncated, data[:len(data)/2], 0o644)
	newer := filepath.Join(dir, "newer.db")
	os.WriteFile(newer, data, 0o644)
	db, err := sql.Open("sqlite3", newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	empty := filepath.Join(dir, "empty.db")
	db, _ = sql.Open("sqlite3", empty)
	db.Exec("CREATE TABLE t(x)")
	db.Close()

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown algorithm", []string{"run", "paxos"}, `unknown algorithm "paxos"`},
		{"unknown algorithm sim", []string{"sim", "paxos"}, "the algorithms are:"},
		{"no nodes", []string{"sim", "central", "-n", "0"}, "--nodes 0"},
		{"negative nodes", []string{"run", "central", "-n", "-3"}, "--nodes -3"},
		{"bad param", []string{"sim", "central", "--param", "bogus=1"}, "--param bogus"},
		{"bad param form", []string{"sim", "central", "--param", "bogus"}, "KEY=VALUE"},
		{"bad duration", []string{"sim", "central", "--think", "soon"}, `"soon"`},
		{"negative duration", []string{"sim", "bully", "--duration", "-1s"}, "--duration -1s"},
		{"negative limit", []string{"sim", "central", "--limit", "-1s"}, "--limit -1s"},
		{"negative stall", []string{"run", "central", "--stall", "-1s"}, "--stall -1s"},
		{"bad contention", []string{"sim", "central", "--contention", "some"}, "--contention"},
		{"bad format", []string{"check", "--format", "xml", good}, `--format "xml"`},
		{"missing trace", []string{"check", filepath.Join(dir, "nope.db")}, "nope.db"},
		{"not sqlite", []string{"check", text}, "not a dmx trace"},
		{"not a dmx trace", []string{"check", empty}, "not a dmx trace"},
		{"truncated", []string{"check", truncated}, "truncated.db"},
		{"newer schema", []string{"check", newer}, "newer than this dmx"},
		{"bad query", []string{"sql", good, "SELEC 1"}, "syntax error"},
		{"write query", []string{"sql", good, "DELETE FROM events"}, "readonly"},
		{"no such check", []string{"check", "--checks", "speed", good}, `no check named "speed"`},
		{"no such run", []string{"check", "--run", "42", good}, "42"},
		{"replay not sqlite", []string{"replay", text}, "not a dmx trace"},
		{"replay truncated", []string{"replay", truncated}, "truncated.db"},
		{"replay no such run", []string{"replay", "--run", "42", good}, "42"},
		{"replay bad format", []string{"replay", "--format", "xml", good}, `--format "xml"`},
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"output is a directory", []string{"sim", "central", "-o", dir}, dir},
		{"output is a text file", []string{"sim", "central", "-o", text}, "not a dmx trace"},
		// Faults that can never apply are refused before anything runs.
		{"no leader to crash", []string{"sim", "ricart-agrawala", "--faults", "crash:leader@1s"}, "--faults crash:leader@1s: ricart-agrawala elects no leader in this configuration: name a process instead (e.g. crash:2)"},
		{"no leader under run", []string{"run", "central", "--faults", "pause:leader@1s-2s"}, "central elects no leader in this configuration"},
		{"no token", []string{"sim", "central", "--faults", "crash:token@1s"}, "central has no token"},
		{"recover without a crash", []string{"sim", "central", "--faults", "recover:2@1s"}, "--faults recover:2@1s: no crash before it could bring P2 down: nothing to recover"},
		{"recover before its crash", []string{"sim", "central", "--faults", "recover:2@1s,crash:2@2s"}, "no crash before it could bring P2 down"},
		{"heal of nothing", []string{"sim", "bully", "--faults", "loss:10%,heal@1s"}, "nothing to heal"},
		{"bad fault token", []string{"sim", "central", "--faults", "loss:2O%"}, `fault "loss:2O%": rate "2O%": want a probability above 0 and at most 1`},
		{"fault message type", []string{"sim", "central", "--faults", "crash:1@send:ok#1"}, `central sends no "ok" messages`},
		{"order without nested", []string{"sim", "central", "--resources", "a,b", "--order", "reverse-odd"}, "--order reverse-odd: the lock order of nested entries: add nested (--nested)"},
		{"bad channels", []string{"sim", "central", "--channels", "lossy"}, `channels "lossy": want reliable or raw`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := dmx(t, c.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, errs)
			}
			if !strings.Contains(errs, c.want) {
				t.Fatalf("stderr does not say %q:\n%s", c.want, errs)
			}
			if !strings.HasPrefix(errs, "dmx: ") && !strings.Contains(errs, "\ndmx: ") {
				t.Fatalf("stderr is not a dmx error line:\n%s", errs)
			}
		})
	}
	// Nothing already recorded is lost: the text file refused as an output
	// is untouched.
	if b, _ := os.ReadFile(text); string(b) != "this is not a trace\n" {
		t.Fatalf("dmx wrote into a file that is not a trace: %q", b)
	}
}

// TestHugeDurations: a think, hold or delay time that would overflow
// simulated time is a usage error, not a run with a wrapped clock.
func TestHugeDurations(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.db")
	for _, flag := range []string{"--think", "--hold", "--delay"} {
		code, _, errs := dmx(t, "sim", "central", flag, "1000h", "-o", out)
		if code != 2 || !strings.Contains(errs, flag) {
			t.Errorf("%s 1000h: exit %d, stderr %q", flag, code, errs)
		}
	}
}
