package freelist

import "testing"

func TestList(t *testing.T) {
	var l List[int]
	a := l.Get()
	if a == nil || *a != 0 {
		t.Fatalf("Get of an empty list: %v, want a new zero value", a)
	}
	*a = 7
	b := new(int)
	l.Put(a, b)
	if got := l.Get(); got != b {
		t.Errorf("Get after Put(a, b) returned %p, want b %p (last kept, first out)", got, b)
	}
	if got := l.Get(); got != a || *got != 7 {
		t.Errorf("second Get returned %p (%d), want a %p still holding 7", got, *got, a)
	}
	if got := l.Get(); got == a || got == b || *got != 0 {
		t.Errorf("Get of an emptied list returned a kept value or a non-zero one: %p", got)
	}
}
