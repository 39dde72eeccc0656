package envconfig

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"
)

// WriteText writes the table of vars for a terminal: name, default, meaning, one variable a line.
func WriteText(w io.Writer, vars []Var) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, v := range vars {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Name, plain(defaultMarkdown(v)), plain(v.Help))
	}
	return tw.Flush()
}

// Markdown is the table of vars as docs/operations.md shows it.
func Markdown(vars []Var) string {
	var b strings.Builder
	b.WriteString("| variable | default | meaning |\n|---|---|---|\n")
	for _, v := range vars {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", v.Name, cell(defaultMarkdown(v)), cell(v.Help))
	}
	return b.String()
}

// defaultMarkdown is the default column: the value, or what an unset variable means.
func defaultMarkdown(v Var) string {
	switch {
	case v.Default != "":
		return "`" + v.Default + "`"
	case v.Required != "":
		return "(required)"
	}
	return v.Unset
}

// cell escapes the one character a Markdown table cell cannot hold as it is.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

var mdLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// plain is Markdown as a terminal shows it: a link's text without its target, no code or
// emphasis marks.
func plain(s string) string {
	s = mdLink.ReplaceAllString(s, "$1")
	return strings.NewReplacer("`", "", "**", "").Replace(s)
}

// The marks around a generated table in a Markdown document. The line that opens it says, for
// whoever edits the document, where the table comes from:
//
//	<!-- settings of vantage-agent: generated from agent/internal/config; … -->
//	| variable | default | meaning |
//	…
//	<!-- end of settings -->
const (
	beginMark = "<!-- settings of "
	endMark   = "<!-- end of settings -->"
)

// Splice returns doc with the table between the marks of id replaced by table.
func Splice(doc, id, table string) (string, error) {
	open := beginMark + id + ":"
	i := strings.Index(doc, open)
	if i < 0 {
		return "", fmt.Errorf("no line starting %q", open)
	}
	start := strings.Index(doc[i:], "-->\n")
	if start < 0 {
		return "", fmt.Errorf("the line starting %q does not end with -->", open)
	}
	start += i + len("-->\n")
	end := strings.Index(doc[start:], endMark)
	if end < 0 {
		return "", fmt.Errorf("no %q after %q", endMark, open)
	}
	return doc[:start] + table + doc[start+end:], nil
}
