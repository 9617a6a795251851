package link

import "time"

// The retransmission time-out of a message starts at InitialRTO and
// doubles after each retransmission until it reaches MaxRTO. The UDP
// transport and the simulator's model of it use the same.
const (
	InitialRTO = 30 * time.Millisecond
	MaxRTO     = time.Second
)

// MaxTries bounds the copies of one message the fault layer may drop in a
// row before the message is given up (recorded as a drop that is not sent
// again): injected loss of everything on a channel for about 13s (the
// time-out doubling from 30ms to a second). Silence alone never makes a
// message given up: a receiver that is alive but slow gets it in the end.
const MaxTries = 12

// MaxHeld bounds what waits for an earlier message: a message beyond it
// is dropped and comes again (the transport does not acknowledge it).
const MaxHeld = 1 << 16

// InOrder is the receiving end of a channel that delivers in the order
// sent: messages are numbered from 1 and each is delivered once, after
// those sent before it, except one marked unordered (a reorder fault),
// delivered as soon as it comes. It is used from one goroutine.
type InOrder[T any] struct {
	expect uint64 // next sequence number to deliver in order
	held   map[uint64]T
	done   map[uint64]bool // delivered ahead of order
}

// NewInOrder returns a channel's receiving end that expects message 1.
func NewInOrder[T any]() InOrder[T] {
	return InOrder[T]{expect: 1, held: map[uint64]T{}, done: map[uint64]bool{}}
}

// Delivered is the highest sequence number delivered in order: what a
// cumulative acknowledgement acknowledges.
func (c *InOrder[T]) Delivered() uint64 { return c.expect - 1 }

// SkipTo stops waiting for the messages before seq that did not come:
// their sender gave them up. Those held are delivered, in order, and then
// what follows them.
func (c *InOrder[T]) SkipTo(seq uint64, deliver func(T)) {
	if seq <= c.expect {
		return
	}
	for c.expect < seq {
		if m, ok := c.held[c.expect]; ok {
			delete(c.held, c.expect)
			deliver(m)
		}
		delete(c.done, c.expect)
		c.expect++
	}
	c.advance(deliver)
}

// GiveUp stops waiting for message seq, which will not come: the
// simulator's model gives the receiver the news at once.
func (c *InOrder[T]) GiveUp(seq uint64, deliver func(T)) {
	if seq == c.expect {
		c.SkipTo(seq+1, deliver)
	} else if seq > c.expect {
		c.done[seq] = true
	}
}

// Accept takes message seq, delivering what is now in order; it reports
// false for a duplicate.
func (c *InOrder[T]) Accept(seq uint64, unordered bool, m T, deliver func(T)) bool {
	if _, held := c.held[seq]; held || seq < c.expect || c.done[seq] {
		return false
	}
	switch {
	case unordered && seq != c.expect:
		c.done[seq] = true
		deliver(m)
		return true
	case seq != c.expect:
		if len(c.held) < MaxHeld {
			c.held[seq] = m
		}
		return true
	}
	deliver(m)
	c.expect++
	c.advance(deliver)
	return true
}

// advance delivers the held messages that are now in order.
func (c *InOrder[T]) advance(deliver func(T)) {
	for {
		if c.done[c.expect] {
			delete(c.done, c.expect)
			c.expect++
			continue
		}
		next, ok := c.held[c.expect]
		if !ok {
			return
		}
		delete(c.held, c.expect)
		c.expect++
		deliver(next)
	}
}
