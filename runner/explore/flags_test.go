package explore_test

import "flag"

var full = flag.Bool("explore.full", false, "TestClean searches the runs of 3 processes and 2 entries each (hours)")
