#!/usr/bin/env python3
"""A central coordinator for mutual exclusion, as seed 003 (slides 5-6) and
seed 000 give it, written against dmx's node protocol with Python's standard
library only.

Node 0 is the coordinator (--param coordinator=K picks another). To enter,
a client sends a request to the coordinator and waits for its grant; it
sends a release when it leaves. The coordinator grants at once if nobody
holds the resource, else queues the request and grants in FIFO order at
each release. It competes too: its own requests and releases are local.

    dmx sim --exec 'python3 examples/programs/central.py'
    dmx run --exec 'python3 examples/programs/central.py' -n 4

The messages are those of dmx's own central (request, grant and release,
each with "id"; a request with "stamp" too, the clock dmx hands each
input), so that dmx check --conform central TRACE compares it, input by
input, with dmx's machine.
"""
import json
import sys


class Node:
    def __init__(self, init):
        self.me, self.n = init["node"], init["nodes"]
        self.resource = init.get("resource", "cs")
        self.coord = int(init["params"].get("coordinator", "0"))
        self.requested = False  # asked, not granted yet
        self.holder = None      # the coordinator's: who is in the critical section
        self.queue = []         # the coordinator's: who waits, in FIFO order
        self.out = []

    def send(self, to, body):
        self.out.append({"type": "send", "to": to, "body": body})

    def enter(self):
        self.requested = False
        self.out.append({"type": "enter", "resource": self.resource})

    # The coordinator's part.

    def coord_request(self, j):
        """Grant at once if nobody holds the resource, else queue j."""
        if self.holder is None:
            self.grant(j)
        else:
            self.queue.append(j)

    def coord_release(self):
        """Free the resource; grant it to the head of the queue."""
        self.holder = None
        if self.queue:
            self.grant(self.queue.pop(0))

    def grant(self, j):
        self.holder = j
        if j == self.me:
            self.enter()
        else:
            self.send(j, {"type": "grant", "id": j})

    # The inputs.

    def request(self, clock):
        self.requested = True
        if self.me == self.coord:
            self.coord_request(self.me)  # local: no message
        else:
            self.send(self.coord, {"type": "request", "id": self.me, "stamp": clock})
            self.out.append({"type": "waiting", "for": [self.coord]})

    def release(self):
        self.out.append({"type": "exit", "resource": self.resource})
        if self.me == self.coord:
            self.coord_release()
        else:
            self.send(self.coord, {"type": "release", "id": self.me})

    def message(self, sender, body):
        kind = body["type"]
        if kind == "request" and self.me == self.coord:
            self.coord_request(sender)
        elif kind == "release" and self.me == self.coord and self.holder == sender:
            self.coord_release()
        elif kind == "grant" and self.requested:
            self.out.append({"type": "waiting", "for": []})
            self.enter()


def main(make=Node):
    """Reads the inputs from stdin and writes each one's outputs, then done;
    make builds the node (central-buggy.py passes its own)."""
    node = None
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "init":
            node = make(msg)
        elif kind == "request":
            node.request(msg["clock"])
        elif kind == "release":
            node.release()
        elif kind == "message":
            node.message(msg["from"], msg["body"])
        for o in node.out:
            print(json.dumps(o))
        node.out = []
        print('{"type": "done"}', flush=True)


if __name__ == "__main__":
    main()
