package trace

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParseVC(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want VC
		err  bool
	}{
		{"[]", VC{}, false},
		{"[1,0,2]", VC{1, 0, 2}, false},
		{" [ 1 , 2 ] ", VC{1, 2}, false},
		{"[18446744073709551615]", VC{1<<64 - 1}, false},
		{"[18446744073709551616]", nil, true},
		{"[1,]", nil, true},
		{"[-1]", nil, true},
		{"[1 2]", nil, true},
		{"[1,x,2]", nil, true},
		{"[1", nil, true},
		{"1", nil, true},
		{"", nil, true},
		{"[1]x", nil, true},
	} {
		got, err := ParseVC(nil, []byte(tc.in))
		if (err != nil) != tc.err || (!tc.err && !reflect.DeepEqual(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0)) {
			t.Errorf("ParseVC(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// FuzzParseVC checks ParseVC against encoding/json: what JSON reads as an
// array of uint64 ParseVC must read the same, and what ParseVC reads must
// print back (VC.String) to text it reads the same again.
func FuzzParseVC(f *testing.F) {
	for _, s := range []string{"[]", "[1,0,2]", " [ 1 ,\t2 ]\n", "[18446744073709551615]", "[18446744073709551616]",
		"[1,]", "[-1]", "[01]", "[1e3]", "[1.0]", "null", "[1", "[1]]", `["1"]`, "[[1]]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseVC(VC{9, 9, 9}, b)
		var ref []uint64
		if json.Unmarshal(b, &ref) == nil && ref != nil {
			if err != nil {
				t.Fatalf("ParseVC(%q): %v, but JSON reads %v", b, err, ref)
			}
			if len(got) != len(ref) {
				t.Fatalf("ParseVC(%q) = %v, JSON reads %v", b, got, ref)
			}
			for i := range ref {
				if got[i] != ref[i] {
					t.Fatalf("ParseVC(%q) = %v, JSON reads %v", b, got, ref)
				}
			}
		}
		if err != nil {
			return
		}
		again, err := ParseVC(nil, []byte(got.String()))
		if err != nil || !got.Equal(again) || len(again) != len(got) {
			t.Fatalf("ParseVC(%q) = %v, which prints as %q and reads back as %v, %v", b, got, got.String(), again, err)
		}
	})
}
