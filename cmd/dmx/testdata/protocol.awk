# What the awk programs of the tests of --exec (lock.awk, elect.awk) share:
# num reads a whole number field of the input line ("key":123), -1 if there
# is none. POSIX awk, no JSON library: the field is found by pattern.
function num(key,   m) {
	if (match($0, "\"" key "\":[0-9]+")) {
		m = substr($0, RSTART, RLENGTH)
		sub(/.*:/, "", m)
		return m + 0
	}
	return -1
}
