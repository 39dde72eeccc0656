package pwscript

import (
	"math"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// maxFormatted caps a value printed in a message.
const maxFormatted = 1000

// format prints a script value for a message, in the style of Jest's pretty-format as
// Playwright shows it: strings in double quotes, arrays [1, 2], objects {"a": 1}.
func (r *run) format(v goja.Value) string {
	return truncate(r.formatDepth(v, 0), maxFormatted)
}

func (r *run) formatDepth(v goja.Value, depth int) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	}
	o, isObj := v.(*goja.Object)
	if !isObj {
		switch x := v.Export().(type) {
		case string:
			return quote(x)
		case float64:
			return formatNumber(x)
		case int64:
			return strconv.FormatInt(x, 10)
		case bool:
			return strconv.FormatBool(x)
		}
		if goja.IsBigInt(v) {
			return v.String() + "n"
		}
		return v.String()
	}
	if l, ok := r.locators[o]; ok {
		return "locator(" + strconv.Quote(l.desc) + ")"
	}
	if o == r.pageObj {
		return "Page"
	}
	if _, ok := goja.AssertFunction(o); ok {
		name := o.Get("name")
		if name == nil || name.String() == "" {
			return "[Function anonymous]"
		}
		return "[Function " + name.String() + "]"
	}
	switch o.ClassName() {
	case "RegExp", "Date":
		return o.String()
	case "Error":
		return "[" + o.String() + "]"
	case "Array":
		if depth > 3 {
			return "[Array]"
		}
		keys := o.Keys()
		parts := make([]string, 0, len(keys))
		for i, k := range keys {
			if i == 20 {
				parts = append(parts, "…")
				break
			}
			parts = append(parts, r.formatDepth(o.Get(k), depth+1))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	name := constructorName(o)
	if depth > 3 {
		return "[" + name + "]"
	}
	keys := o.Keys()
	parts := make([]string, 0, len(keys))
	for i, k := range keys {
		if i == 20 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, quote(k)+": "+r.formatDepth(o.Get(k), depth+1))
	}
	prefix := ""
	if name != "Object" && name != "" {
		prefix = name + " "
	}
	return prefix + "{" + strings.Join(parts, ", ") + "}"
}

func constructorName(o *goja.Object) string {
	c, ok := o.Get("constructor").(*goja.Object)
	if !ok {
		return ""
	}
	if n := c.Get("name"); n != nil {
		return n.String()
	}
	return ""
}

func quote(s string) string { return strconv.Quote(s) }

func formatNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0 && math.Signbit(f):
		return "-0"
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
