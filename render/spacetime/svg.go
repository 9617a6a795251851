package spacetime

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/goccy/go-graphviz"
)

// graphvizMu serializes renders: go-graphviz runs one WebAssembly instance
// of Graphviz per process, which is not safe for concurrent use.
var graphvizMu sync.Mutex

// WriteSVG writes the picture as SVG: its DOT, drawn by Graphviz (the
// go-graphviz module: Graphviz compiled to WebAssembly, so nothing needs to
// be installed) with the nop2 engine, which keeps every position.
func WriteSVG(w io.Writer, p *Picture) error {
	var dot bytes.Buffer
	if err := WriteDOT(&dot, p); err != nil {
		return err
	}
	return DOTToSVG(w, dot.Bytes())
}

// DOTToSVG renders a DOT graph of pinned positions (as WriteDOT writes) to
// SVG with Graphviz.
func DOTToSVG(w io.Writer, dot []byte) error {
	graphvizMu.Lock()
	defer graphvizMu.Unlock()
	ctx := context.Background()
	gv, err := graphviz.New(ctx)
	if err != nil {
		return fmt.Errorf("start graphviz: %w", err)
	}
	defer gv.Close()
	g, err := graphviz.ParseBytes(dot)
	if err != nil {
		return fmt.Errorf("graphviz: parse the diagram: %w", err)
	}
	defer g.Close()
	gv.SetLayout(graphviz.NOP2)
	if err := gv.Render(ctx, g, graphviz.SVG, w); err != nil {
		return fmt.Errorf("graphviz: render SVG: %w", err)
	}
	return nil
}
