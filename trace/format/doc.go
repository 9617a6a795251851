// Package format is the registry of the foreign formats dmx reads and
// writes: dmx import and dmx export look formats up here by name. Each
// format is a subpackage (shiviz, govector, perfetto) giving an importer,
// an exporter or both as values of trace/foreign's Importer and Exporter;
// a new format is a package and a line in Importers or Exporters.
//
// testdata/corpus holds logs that other tools wrote, copied unchanged from
// public repositories (its README.md gives their origin); the tests import
// every one of them.
package format
