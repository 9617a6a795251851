# A central lock in awk, a second language the tests of --exec use: node 0
# is the coordinator (and competes too), the others ask it. It speaks the
# vocabulary of dmx's central (request, grant, release with "id"; a
# request's "stamp" is the clock dmx hands the input), so that dmx check
# --conform central compares it with dmx's machine. On a restart it says
# so in a note. POSIX awk, no JSON library: the input's fields are found
# by pattern.
function str(key,   m) {
	if (match($0, "\"" key "\":\"[^\"]*\"")) {
		m = substr($0, RSTART, RLENGTH)
		sub(/^"[^"]*":"/, "", m)
		sub(/"$/, "", m)
		return m
	}
	return ""
}
function bodytype(   i, s) {
	i = index($0, "\"body\":{\"type\":\"")
	if (i == 0) return ""
	s = substr($0, i + 16)
	return substr(s, 1, index(s, "\"") - 1)
}
function send(to, body) { print "{\"type\":\"send\",\"to\":" to ",\"body\":" body "}" }
function enter() { print "{\"type\":\"enter\",\"resource\":\"" res "\"}" }
function grant(j) {
	holder = j
	if (j == me) enter()
	else send(j, "{\"type\":\"grant\",\"id\":" j "}")
}
function ask(j) { if (holder < 0) grant(j); else q[qt++] = j }
function free() { holder = -1; if (qh < qt) grant(q[qh++]) }
{
	t = str("type")
	if (t == "init") {
		me = num("node"); n = num("nodes"); res = str("resource"); holder = -1; qh = qt = 0
		if (index($0, "\"restart\":true")) print "{\"type\":\"note\",\"text\":\"restarted\"}"
	} else if (t == "request") {
		if (me == 0) ask(me)
		else send(0, "{\"type\":\"request\",\"id\":" me ",\"stamp\":" num("clock") "}")
	} else if (t == "release") {
		print "{\"type\":\"exit\",\"resource\":\"" res "\"}"
		if (me == 0) free()
		else send(0, "{\"type\":\"release\",\"id\":" me "}")
	} else if (t == "message") {
		b = bodytype()
		if (b == "request") ask(num("from"))
		else if (b == "release") free()
		else if (b == "grant") enter()
	}
	print "{\"type\":\"done\"}"
	fflush()
}
