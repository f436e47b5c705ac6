"""The base of a layer walker: what every step of a walk reads (the index, the trace's device and depth, the
builder that keeps its hops) and the other steps it hands a hop on to."""
from __future__ import annotations

class Step:
    def __init__(self, root):
        self.root = root  # the Walker: walk_entries, for a fill/copy op's own path (sites.write_call)
        self.b = root.b  # the TraceBuilder: add, repeat, truncate, caps, what was seen
        self.con, self.trace = root.con, root.trace
        self.device, self.depth, self.backward = root.device, root.depth, root.backward
        self.conditions = root.conditions
        self.build = root.build  # the build traced: build.holds(test) reads an #if under it (True/False/None)

    def link(self, root) -> None:
        """The other steps, once all exist: a C++ body hands a stub call to `stubs`, a launch to `launches` ..."""
        self.python, self.ops, self.tails = root.python, root.ops, root.tails
        self.bodies, self.sites = root.bodies, root.sites
        self.stubs, self.launches = root.stubs, root.launches
