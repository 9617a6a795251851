package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// MaxName is the longest name (a resource, a message type, a process's
// name) that a reader hands out as it is in the trace. A trace's names
// are identifiers, which analyses keep per section and per message and
// pictures print in labels: 5 MB resource names made dmx check take 5.7
// GB and dmx render more than 12 GB.
const MaxName = 256

// ShortName returns name if it is at most MaxName bytes long, else its
// first bytes, a hash of the whole, and its length: "rrrr…#1f2e3d4c5b6a7980
// (5000000 bytes)". Two names that differ stay different (but for a
// collision of 64 bits of SHA-256), so that analyses match resources and
// types as before; the same name always gives the same short one.
func ShortName(name string) string {
	if len(name) <= MaxName {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return fmt.Sprintf("%s…#%s (%d bytes)", strings.ToValidUTF8(name[:64], ""), hex.EncodeToString(sum[:8]), len(name))
}
