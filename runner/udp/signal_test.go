package udp

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalReachesProgram: a fault's signal goes to the node's process
// group, so that a program the node runs (runner/exec), in that group, is
// stopped, continued and killed with it.
func TestSignalReachesProgram(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 30 & echo $!; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &nodeProc{cmd: cmd}
	defer func() { p.signal(syscall.SIGKILL); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	// state reads a process's state from /proc: R, S, T (stopped), Z...
	state := func(pid int) string {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return "gone"
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		return f[0]
	}
	// waitState polls for a state change the kernel makes asynchronously
	// (a stop lands once every thread of the program has run): bounded by
	// a minute that no load reaches, not timed.
	waitState := func(pid int, want ...string) string {
		var s string
		for end := time.Now().Add(time.Minute); time.Now().Before(end); {
			s = state(pid)
			for _, w := range want {
				if s == w {
					return s
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		return s
	}
	p.signal(syscall.SIGSTOP)
	if s := waitState(child, "T"); s != "T" {
		t.Errorf("the program after SIGSTOP to the node: state %s, want T", s)
	}
	p.signal(syscall.SIGCONT)
	if s := waitState(child, "S", "R"); s == "T" {
		t.Errorf("the program after SIGCONT: still stopped")
	}
	p.signal(syscall.SIGKILL)
	if s := waitState(child, "gone", "Z"); s != "gone" && s != "Z" {
		t.Errorf("the program after SIGKILL to the node: state %s, want gone", s)
	}
}
