package algo

import "testing"

func TestPackageDoc(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"prose and a code block", "// Package x does it.\n//\n//\t[R1] a rule.\n// More.\npackage x\n", "Package x does it.\n\n\t[R1] a rule.\nMore."},
		{"a comment apart is no doc", "// Copyright.\n\n// Package x.\npackage x\n", "Package x."},
		{"no comment", "package x\n", ""},
		{"no package clause", "// text\n", ""},
		{"CRLF", "// Package x.\r\npackage x\r\n", "Package x."},
	} {
		if got := PackageDoc(c.src); got != c.want {
			t.Errorf("%s: PackageDoc = %q, want %q", c.name, got, c.want)
		}
	}
}
