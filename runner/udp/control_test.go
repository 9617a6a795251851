package udp

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// keptStdins keeps the test's stand-ins for os.Stdin reachable.
var keptStdins []*os.File

// TestPolledControlPipe: a node reads its control pipe through the
// runtime's poller (a read deadline works on it), so that the control
// reader's wait keeps no processor from the node's loop; what is not a
// pipe is read as it was.
func TestPolledControlPipe(t *testing.T) {
	// A pipe in blocking mode, as a node's stdin is (os.Pipe's ends are
	// in the poller already).
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	blocking := os.NewFile(uintptr(p[0]), "stdin")
	// polled's file shares the descriptor: this one, like os.Stdin, must
	// never be finalized, which would close it again.
	keptStdins = append(keptStdins, blocking)
	pw := os.NewFile(uintptr(p[1]), "runner")
	defer pw.Close()
	regular, err := os.Create(filepath.Join(t.TempDir(), "config"))
	if err != nil {
		t.Fatal(err)
	}
	defer regular.Close()
	for _, tc := range []struct {
		name   string
		in     io.Reader
		polled bool
	}{
		{"blocking pipe", blocking, true},
		{"regular file", regular, false},
		{"not a file", strings.NewReader("{}\n"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := polled(tc.in)
			f, ok := r.(*os.File)
			if !tc.polled {
				if r != tc.in {
					t.Errorf("polled(%s) = %v, want it unchanged", tc.name, r)
				}
				return
			}
			if !ok {
				t.Fatalf("polled(%s) is a %T, want an *os.File", tc.name, r)
			}
			if err := f.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
				t.Fatalf("polled(%s): no read deadline: %v", tc.name, err)
			}
			if _, err := f.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("polled(%s): read of an empty pipe = %v, want the deadline exceeded", tc.name, err)
			}
			defer f.Close()
			f.SetReadDeadline(time.Time{})
			pw.Write([]byte("x"))
			if n, err := f.Read(make([]byte, 1)); n != 1 || err != nil {
				t.Errorf("polled(%s): read = %d, %v after a write", tc.name, n, err)
			}
		})
	}
}
