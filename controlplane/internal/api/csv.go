package api

import (
	"encoding/csv"
	"regexp"
)

// csvNumber is a plain decimal number, the only cell that may start with a sign as it is.
var csvNumber = regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?$`)

// csvCell neutralises a cell that a spreadsheet would run as a formula (CSV injection, OWASP):
// one starting with =, +, -, @, a tab or a carriage return gets a leading single quote, so it
// opens as text. Only a plain decimal number keeps its sign: it cannot be a formula. Every text
// cell of every CSV export goes through here — check names are whatever a user typed.
func csvCell(s string) string {
	if s == "" || csvNumber.MatchString(s) {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

// writeCSVRow writes one row of a CSV export, every cell neutralised (csvCell). The error is
// the writer's, which only a failed write to the client can cause.
func writeCSVRow(w *csv.Writer, cells ...string) error {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = csvCell(c)
	}
	return w.Write(out)
}
