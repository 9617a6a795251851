package spacetime

import (
	"fmt"
	"io"
)

// WriteMermaid is not written yet.
func WriteMermaid(w io.Writer, d *Diagram, fenced bool) error {
	return fmt.Errorf("mermaid: not yet")
}
