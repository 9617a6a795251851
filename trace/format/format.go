package format

import (
	"github.com/dmxlab/dmx/trace/foreign"
	"github.com/dmxlab/dmx/trace/format/govector"
	"github.com/dmxlab/dmx/trace/format/perfetto"
	"github.com/dmxlab/dmx/trace/format/shiviz"
)

// Importers are the formats dmx import reads, by name.
var Importers = []foreign.Importer{
	govector.Importer,
	shiviz.Importer,
}

// Exporters are the formats dmx export writes, by name.
var Exporters = []foreign.Exporter{
	shiviz.Exporter,
	govector.Exporter,
	perfetto.Exporter,
}

// Importer returns the importer named name, or nil.
func Importer(name string) *foreign.Importer {
	for i := range Importers {
		if Importers[i].Name == name {
			return &Importers[i]
		}
	}
	return nil
}

// Exporter returns the exporter named name, or nil.
func Exporter(name string) *foreign.Exporter {
	for i := range Exporters {
		if Exporters[i].Name == name {
			return &Exporters[i]
		}
	}
	return nil
}

// ImporterNames lists the names of the importers, in order.
func ImporterNames() []string {
	out := make([]string, len(Importers))
	for i, x := range Importers {
		out[i] = x.Name
	}
	return out
}

// ExporterNames lists the names of the exporters, in order.
func ExporterNames() []string {
	out := make([]string, len(Exporters))
	for i, x := range Exporters {
		out[i] = x.Name
	}
	return out
}
