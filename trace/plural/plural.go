package plural

import (
	"strconv"
	"strings"
)

// Integer is any integer type a count can have.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Count returns n and noun in the number n calls for: Count(1, "event") is
// "1 event", Count(0, "event") "0 events". noun is singular; Noun says how
// its plural is made.
func Count[T Integer](n T, noun string) string {
	return strconv.FormatInt(int64(n), 10) + " " + Noun(n, noun)
}

// Noun returns the singular noun as it goes with a count of n: itself for
// 1, else its plural. Only the last word changes ("critical section" ->
// "critical sections"), by the regular rules: "process" -> "processes",
// "entry" -> "entries", "event" -> "events". A noun dmx uses whose plural
// is not regular does not exist yet; Form takes both forms for one.
func Noun[T Integer](n T, noun string) string {
	if n == 1 || noun == "" {
		return noun
	}
	switch {
	case hasAnySuffix(noun, "s", "x", "z", "ch", "sh"):
		return noun + "es"
	case strings.HasSuffix(noun, "y") && len(noun) > 1 && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])):
		return noun[:len(noun)-1] + "ies"
	}
	return noun + "s"
}

// Form returns one if n is 1, else many: Form(n, "was", "were").
func Form[T Integer](n T, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func hasAnySuffix(s string, suffixes ...string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}
