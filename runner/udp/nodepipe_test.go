package udp

import (
	"bytes"
	"io"
	"testing"
	"time"
)

// TestPipeSize: a run's pipes stay within a quarter of the user's default
// pipe quota, and never below Linux's default size.
func TestPipeSize(t *testing.T) {
	for _, tc := range []struct{ n, want int }{
		{1, 1 << 20}, {5, 1 << 20}, {16, 1 << 20}, {17, (16 << 20) / 17}, {100, (16 << 20) / 100}, {256, 0}, {16384, 0},
	} {
		if got := pipeSize(tc.n); got != tc.want {
			t.Errorf("pipeSize(%d) = %d, want %d", tc.n, got, tc.want)
		}
		if tc.n*pipeSize(tc.n) > 16<<20 {
			t.Errorf("%d pipes of %d bytes take more than 16 MiB", tc.n, pipeSize(tc.n))
		}
	}
}

// TestPolledPipe: what the node writes, in writes that come while the
// reader waits, is read whole and in order, then EOF once the node's end
// is closed.
func TestPolledPipe(t *testing.T) {
	r, w, err := newNodePipe(pipeSize(5))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var want bytes.Buffer
	writes := make([][]byte, 200)
	for k := range writes {
		writes[k] = bytes.Repeat([]byte{byte(k)}, 1+k*37)
		want.Write(writes[k])
	}
	go func() {
		for k, b := range writes {
			w.Write(b)
			if k%50 == 0 {
				time.Sleep(3 * readPace) // the reader finds the pipe empty
			}
		}
		w.Close()
	}()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("read %d bytes, not the %d written in order", len(got), want.Len())
	}
}
