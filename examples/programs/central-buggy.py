#!/usr/bin/env python3
"""central.py with a classic student bug: the coordinator grants a request
when its queue is empty, forgetting that someone may hold the resource with
nobody waiting, so it gives the grant a second time while the first is held.
Two clients end up in the critical section at once.

The one command that finds it (exit code 1, mutex-causal and mutex-realtime
name the two overlapping critical sections; the diagram is drawn beside the
trace):

    dmx sim --exec 'python3 examples/programs/central-buggy.py' --seed 1

and dmx check --conform central on its trace names the step where the
coordinator departs from dmx's machine (seed 003 slide 5: the coordinator
does not reply until release); dmx explore --exec ... --walks 20 finds it
by searching schedules.
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
        if not self.queue:  # BUG: the resource may be held with nobody queued
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


def main():
    node = None
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "init":
            node = Node(msg)
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


main()
