# An election in awk for the tests of --exec (--param kind=election): every
# node tells every other its id; once it has heard from all, the highest id
# leads. With -v lowest=1 it picks the lowest: a bug check validity's
# highest-id rule finds.
function decide() { print "{\"type\":\"leader\",\"leader\":" best ",\"term\":1}" }
{
	if (index($0, "\"type\":\"init\"")) {
		me = num("node"); n = num("nodes"); best = me; heard = 1
		print "{\"type\":\"election\",\"term\":1}"
		for (j = 0; j < n; j++) if (j != me) print "{\"type\":\"send\",\"to\":" j ",\"body\":{\"type\":\"id\",\"id\":" me "}}"
		if (n == 1) decide()
	} else if (index($0, "\"type\":\"message\"")) {
		id = num("id")
		if (lowest ? id < best : id > best) best = id
		if (++heard == n) decide()
	}
	print "{\"type\":\"done\"}"
	fflush()
}
