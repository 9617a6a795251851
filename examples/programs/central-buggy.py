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
import os
import sys

# The rest is central.py's, imported from beside this file (without
# writing a __pycache__ into examples/).
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import central  # noqa: E402


class Node(central.Node):
    def coord_request(self, j):
        """Grant at once if nobody is queued, else queue j."""
        if not self.queue:  # BUG: the resource may be held with nobody queued
            self.grant(j)
        else:
            self.queue.append(j)


central.main(Node)
