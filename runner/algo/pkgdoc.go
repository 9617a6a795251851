package algo

import "strings"

// PackageDoc returns the package comment of the Go source src (a doc.go
// embedded with go:embed) as Go doc comment text: the "//" lines right
// above the package clause, without their comment markers. An algorithm
// package sets Spec.Doc to PackageDoc of its own doc.go, so that its
// documentation has one source, read by go doc and by dmx list alike.
func PackageDoc(src string) string {
	var block []string
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.HasPrefix(line, "//"):
			text := strings.TrimPrefix(line, "//")
			// "// text" is prose; "//\ttext" is a preformatted line,
			// whose tab the doc comment syntax needs.
			block = append(block, strings.TrimPrefix(text, " "))
		case strings.HasPrefix(line, "package "):
			return strings.Join(block, "\n")
		default:
			// A blank line or anything else ends a comment block: only
			// the one that touches the package clause is its doc.
			block = block[:0]
		}
	}
	return ""
}
