package pwscript

import (
	"strings"

	"github.com/dop251/goja"
)

// functionSource is the source of a function the script passes to the page (evaluate). goja's
// Function.prototype.toString ends an arrow function whose body is a parenthesized
// expression — () => ({ a: 1 }) — before the closing parenthesis; the page would then read
// "() => ({ a: 1 }" and fail with "Unexpected end of input". The parentheses missing at the
// end are put back.
func functionSource(fn goja.Value) string {
	src := fn.String()
	if missing := unclosedParens(src); missing > 0 {
		src += strings.Repeat(")", missing)
	}
	return src
}

// unclosedParens counts the parentheses src opens and does not close, outside string and
// template literals and comments. A regular expression literal with a parenthesis in it can
// mislead the count only if it is unbalanced too.
func unclosedParens(src string) int {
	depth := 0
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '(':
			depth++
		case ')':
			depth--
		case '"', '\'', '`':
			for i++; i < len(src) && src[i] != c; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '/':
			if i+1 < len(src) && src[i+1] == '/' {
				for i < len(src) && src[i] != '\n' {
					i++
				}
			} else if i+1 < len(src) && src[i+1] == '*' {
				end := strings.Index(src[i+2:], "*/")
				if end < 0 {
					return 0
				}
				i += end + 3
			}
		}
	}
	return max(depth, 0)
}
