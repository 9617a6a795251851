package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The ring's processes talk to the parent over stdin and stdout, one line
// each way: a node prints its UDP address; the parent answers with the
// address of the next node and, for node 0 only, the laps to warm up and
// to measure. Node 0 then starts the token and, when the measured laps are
// done, prints their duration in ns. The others pass the token on until
// their stdin closes.

// RingNode is the body of one ring process (`dmx bench ring-node`).
func RingNode(stdin io.Reader, stdout io.Writer) error {
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return fmt.Errorf("ring node: %w", err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintln(stdout, conn.LocalAddr().String()); err != nil {
		return err
	}
	in := bufio.NewReader(stdin)
	line, err := in.ReadString('\n')
	if err != nil {
		return fmt.Errorf("ring node: want the next node's address: %w", err)
	}
	var next string
	var warm, laps int
	if _, err := fmt.Sscan(line, &next, &warm, &laps); err != nil {
		return fmt.Errorf("ring node: bad line %q: %w", strings.TrimSpace(line), err)
	}
	to, err := netip.ParseAddrPort(next)
	if err != nil {
		return fmt.Errorf("ring node: next address %q: %w", next, err)
	}
	// The parent closing stdin ends a node that is not node 0.
	go func() {
		io.Copy(io.Discard, in)
		conn.Close()
	}()
	var tok [8]byte
	if laps == 0 {
		for {
			if _, err := conn.Read(tok[:]); err != nil {
				return nil
			}
			if _, err := conn.WriteToUDPAddrPort(tok[:], to); err != nil {
				return err
			}
		}
	}
	var start time.Time
	for lap := 0; ; lap++ {
		if lap == warm {
			start = time.Now()
		}
		if lap == warm+laps {
			_, err := fmt.Fprintln(stdout, time.Since(start).Nanoseconds())
			return err
		}
		binary.LittleEndian.PutUint64(tok[:], uint64(lap))
		if _, err := conn.WriteToUDPAddrPort(tok[:], to); err != nil {
			return err
		}
		if _, err := conn.Read(tok[:]); err != nil {
			return err
		}
	}
}

// Ring measures the floor: a token passed round a ring of n processes
// started by command, warm laps first, then laps measured. It returns the
// time of one hop.
func Ring(ctx context.Context, command func() *exec.Cmd, n, warm, laps int) (time.Duration, error) {
	if n < 2 || laps < 1 {
		return 0, fmt.Errorf("ring: want at least 2 processes and 1 lap, got %d and %d", n, laps)
	}
	type proc struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Reader
	}
	procs := make([]proc, 0, n)
	defer func() {
		for _, p := range procs {
			p.stdin.Close()
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	}()
	addrs := make([]string, n)
	for i := range n {
		cmd := command()
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return 0, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return 0, err
		}
		if err := cmd.Start(); err != nil {
			return 0, fmt.Errorf("ring: start process %d: %w", i, err)
		}
		procs = append(procs, proc{cmd, stdin, bufio.NewReader(stdout)})
		line, err := procs[i].out.ReadString('\n')
		if err != nil {
			return 0, fmt.Errorf("ring: process %d did not say its address: %w", i, err)
		}
		addrs[i] = strings.TrimSpace(line)
	}
	// Node 0 last: the others are listening by then.
	for i := n - 1; i >= 0; i-- {
		w, l := 0, 0
		if i == 0 {
			w, l = warm, laps
		}
		if _, err := fmt.Fprintf(procs[i].stdin, "%s %d %d\n", addrs[(i+1)%n], w, l); err != nil {
			return 0, fmt.Errorf("ring: process %d: %w", i, err)
		}
	}
	type result struct {
		line string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		line, err := procs[0].out.ReadString('\n')
		done <- result{line, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return 0, fmt.Errorf("ring: process 0 ended without a measure: %w", r.err)
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(r.line), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("ring: process 0 said %q: %w", r.line, err)
		}
		return time.Duration(ns) / time.Duration(n*laps), nil
	case <-ctx.Done():
		return 0, errors.Join(errors.New("ring: interrupted"), context.Cause(ctx))
	}
}
