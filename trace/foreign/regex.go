package foreign

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// CompileJS compiles a regular expression written for ShiViz, in
// JavaScript's syntax, with ShiViz's flags (multi-line: ^ and $ match at
// line ends). Go's regexp (RE2) reads most of it as it is, named groups
// (?<name>...) included; JavaScript's dot, which matches no line end, and
// its escapes \uXXXX, \u{X...}, \cX and \0 are translated. What RE2 cannot
// do, lookaround and back-references, is an error that says so, as is a
// group name used twice (ShiViz refuses that too). \s, \d and \w are ASCII
// classes here, as \d and \w are in JavaScript.
func CompileJS(js string) (*regexp.Regexp, error) {
	goSyntax, err := translateJS(js)
	if err != nil {
		return nil, fmt.Errorf("regex %s: %w", short(js), err)
	}
	re, err := regexp.Compile("(?m)" + goSyntax)
	if err != nil {
		return nil, fmt.Errorf("regex %s: %w", short(js), unwrapSyntax(err))
	}
	seen := map[string]bool{}
	for _, name := range re.SubexpNames() {
		if name == "" {
			continue
		}
		if seen[name] {
			return nil, fmt.Errorf("regex %s: two groups are named %q", short(js), name)
		}
		seen[name] = true
	}
	return re, nil
}

// unwrapSyntax drops "error parsing regexp: " from Go's message: ours
// already says it is about a regex.
func unwrapSyntax(err error) error {
	msg := strings.TrimPrefix(err.Error(), "error parsing regexp: ")
	return fmt.Errorf("%s", msg)
}

// jsDot is JavaScript's dot: any character but a line terminator.
const jsDot = `[^\n\r\x{2028}\x{2029}]`

// translateJS rewrites a JavaScript regular expression in Go's syntax.
func translateJS(js string) (string, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(js); i++ {
		c := js[i]
		switch {
		case c == '\\':
			if i+1 >= len(js) {
				return "", fmt.Errorf("ends with a lone backslash")
			}
			i++
			n, err := translateEscape(&b, js, i, inClass)
			if err != nil {
				return "", err
			}
			i += n
		case inClass:
			if c == ']' {
				inClass = false
			}
			b.WriteByte(c)
		case c == '[':
			switch {
			case strings.HasPrefix(js[i:], "[^]"):
				b.WriteString(`[\x{0}-\x{10FFFF}]`) // JavaScript: any character
				i += 2
			case strings.HasPrefix(js[i:], "[]"):
				b.WriteString(`[^\x{0}-\x{10FFFF}]`) // JavaScript: no character
				i++
			default:
				inClass = true
				b.WriteByte(c)
				if strings.HasPrefix(js[i+1:], "^") {
					b.WriteByte('^')
					i++
				}
				if strings.HasPrefix(js[i+1:], "]") { // a literal ] first in the class
					b.WriteString(`\]`)
					i++
				}
			}
		case c == '.':
			b.WriteString(jsDot)
		case c == '(' && strings.HasPrefix(js[i:], "(?"):
			rest := js[i+2:]
			switch {
			case strings.HasPrefix(rest, "="), strings.HasPrefix(rest, "!"):
				return "", fmt.Errorf("uses a lookahead %s, which Go's regexp (RE2) does not support; rewrite the regex without it", short(js[i:min(len(js), i+4)]))
			case strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, "<!"):
				return "", fmt.Errorf("uses a lookbehind %s, which Go's regexp (RE2) does not support; rewrite the regex without it", short(js[i:min(len(js), i+5)]))
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	if inClass {
		return "", fmt.Errorf("a character class [...] is not closed")
	}
	return b.String(), nil
}

// translateEscape writes the escape whose letter is js[i] and returns how
// many more bytes of js it used.
func translateEscape(b *strings.Builder, js string, i int, inClass bool) (int, error) {
	c := js[i]
	hex := func(s string) bool {
		for _, r := range s {
			if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
				return false
			}
		}
		return s != ""
	}
	switch {
	case c == 'u' && i+4 < len(js) && hex(js[i+1:i+5]):
		fmt.Fprintf(b, `\x{%s}`, js[i+1:i+5])
		return 4, nil
	case c == 'u' && strings.HasPrefix(js[i+1:], "{"):
		end := strings.IndexByte(js[i+1:], '}')
		if end < 0 || !hex(js[i+2:i+1+end]) {
			return 0, fmt.Errorf(`\u{...} needs hex digits and a closing brace`)
		}
		fmt.Fprintf(b, `\x{%s}`, js[i+2:i+1+end])
		return end + 1, nil
	case c == 'c' && i+1 < len(js) && (js[i+1]|0x20) >= 'a' && (js[i+1]|0x20) <= 'z':
		fmt.Fprintf(b, `\x{%x}`, js[i+1]%32)
		return 1, nil
	case c == '0' && (i+1 >= len(js) || js[i+1] < '0' || js[i+1] > '9'):
		b.WriteString(`\x{0}`)
		return 0, nil
	case c >= '1' && c <= '9':
		return 0, fmt.Errorf(`uses a back-reference \%c, which Go's regexp (RE2) does not support`, c)
	case c == 'k' && strings.HasPrefix(js[i+1:], "<"):
		return 0, fmt.Errorf(`uses a named back-reference \k<...>, which Go's regexp (RE2) does not support`)
	case c == 'b' && inClass:
		b.WriteString(`\x{8}`) // [\b] is a backspace in JavaScript
		return 0, nil
	case strings.IndexByte(`dDwWsSbBnrtfvxpP`, c) >= 0:
		b.WriteByte('\\')
		b.WriteByte(c)
		return 0, nil
	case c < 0x80 && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9'):
		b.WriteByte('\\') // an escaped punctuation character
		b.WriteByte(c)
		return 0, nil
	}
	// Any other escaped character stands for itself in JavaScript ("\e" is
	// "e"), as do \u and \c without what they need.
	r, size := utf8.DecodeRuneInString(js[i:])
	b.WriteString(regexp.QuoteMeta(string(r)))
	return size - 1, nil
}
