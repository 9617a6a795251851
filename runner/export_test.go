package runner

import "time"

// SetTestMaxRTO caps the retransmission timeout of the nodes launched from
// now on (0: the default), so that a test sees in seconds what a minute of
// retransmissions does.
func SetTestMaxRTO(d time.Duration) { testMaxRTO = d }
