package localrun

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/vantagehq/vantage/agent/internal/browser"
	"github.com/vantagehq/vantage/agent/internal/browser/pwscript"
)

// report prints run as Playwright's list reporter does: each test with its steps, marks and
// durations, then the failures with the failing line of source, then the totals.
func report(w io.Writer, source string, run *browser.ScriptRun, written []string) {
	rep := run.Report
	if rep == nil {
		fmt.Fprintf(w, "\n  ✘ the run did not finish (%s): %s\n\n", run.Problem, run.Message)
		printWritten(w, written)
		return
	}
	fmt.Fprintf(w, "\nRunning %s using 1 worker\n\n", plural(len(rep.Tests), "test"))
	for i, t := range rep.Tests {
		fmt.Fprintf(w, "  %s %2d %s%s\n", mark(t.Status), i+1, t.Title, duration(t.Status, t.Duration))
		printSteps(w, t.Steps, 2)
		for _, a := range t.Annotations {
			fmt.Fprintf(w, "        @%s %s\n", a.Type, a.Description)
		}
	}
	n := 0
	for _, t := range rep.Tests {
		if t.Status != pwscript.StatusFailed && t.Status != pwscript.StatusTimedOut {
			continue
		}
		n++
		fmt.Fprintf(w, "\n  %d) %s %s\n\n", n, t.Title, strings.Repeat("─", max(10, 60-len(t.Title))))
		msg := t.Error
		where := ""
		if f := rep.Failure; n == 1 && f != nil {
			msg, where = f.Message, f.Location
		}
		for _, l := range strings.Split(msg, "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
		if where != "" {
			fmt.Fprint(w, snippet(source, where))
			fmt.Fprintf(w, "\n      at %s\n", where)
		}
	}
	if rep.Failure != nil && n == 0 { // the run failed outside any test (loading the file)
		fmt.Fprintf(w, "\n  Error: %s\n", rep.Failure.Message)
		if rep.Failure.Location != "" {
			fmt.Fprint(w, snippet(source, rep.Failure.Location))
			fmt.Fprintf(w, "\n      at %s\n", rep.Failure.Location)
		}
	}
	for _, line := range rep.ArtifactsDropped {
		fmt.Fprintf(w, "\n  ! %s", line)
	}
	if len(rep.ArtifactsDropped) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	printWritten(w, written)
	counts := map[pwscript.Status]int{}
	for _, t := range rep.Tests {
		counts[t.Status]++
	}
	if c := counts[pwscript.StatusFailed] + counts[pwscript.StatusTimedOut]; c > 0 {
		fmt.Fprintf(w, "  %d failed\n", c)
	}
	if c := counts[pwscript.StatusSkipped]; c > 0 {
		fmt.Fprintf(w, "  %d skipped\n", c)
	}
	fmt.Fprintf(w, "  %d passed (%s)\n", counts[pwscript.StatusPassed], human(run.Duration))
}

func printWritten(w io.Writer, written []string) {
	if len(written) == 0 {
		return
	}
	fmt.Fprintln(w, "  Written:")
	for _, p := range written {
		fmt.Fprintf(w, "    %s\n", p)
	}
	fmt.Fprintln(w)
}

func printSteps(w io.Writer, steps []pwscript.StepReport, depth int) {
	for _, s := range steps {
		m := "✓"
		if s.Error != "" {
			m = "✘"
		}
		fmt.Fprintf(w, "%s%s %s (%s)\n", strings.Repeat("  ", depth+2), m, s.Title, human(s.Duration))
		printSteps(w, s.Steps, depth+1)
	}
}

func mark(s pwscript.Status) string {
	switch s {
	case pwscript.StatusPassed:
		return "✓"
	case pwscript.StatusSkipped:
		return "-"
	}
	return "✘"
}

func duration(s pwscript.Status, d time.Duration) string {
	if s == pwscript.StatusSkipped {
		return ""
	}
	return " (" + human(d) + ")"
}

// human is a duration as Playwright prints it: 850ms, 1.2s.
func human(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// snippet is the lines around where ("check.spec.ts:12:5") with the line marked and a caret
// under the column, as Playwright prints a failure's source; "" when where names no line of
// source.
func snippet(source, where string) string {
	parts := strings.Split(where, ":")
	if len(parts) < 3 {
		return ""
	}
	line, err1 := strconv.Atoi(parts[len(parts)-2])
	col, err2 := strconv.Atoi(parts[len(parts)-1])
	lines := strings.Split(source, "\n")
	if err1 != nil || err2 != nil || line < 1 || line > len(lines) {
		return ""
	}
	var b strings.Builder
	width := len(strconv.Itoa(min(line+2, len(lines))))
	b.WriteString("\n")
	for i := max(1, line-2); i <= min(line+2, len(lines)); i++ {
		prefix := "  "
		if i == line {
			prefix = "> "
		}
		fmt.Fprintf(&b, "    %s%*d | %s\n", prefix, width, i, strings.TrimRight(lines[i-1], "\r"))
		if i == line && col >= 1 {
			fmt.Fprintf(&b, "      %*s | %s^\n", width, "", strings.Repeat(" ", col-1))
		}
	}
	return b.String()
}
