package party

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/partyhq/party/core/deliver"
)

// WriteJSON writes v as party's --json prints it: indented, with <, > and
// & as they are.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteTable writes rows in aligned columns under header, as party's
// listings print them.
func WriteTable(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// Rows are the Row of each of items.
func Rows[T interface{ Row() []string }](items []T) [][]string {
	rows := make([][]string, len(items))
	for i, it := range items {
		rows[i] = it.Row()
	}
	return rows
}

// WriteJSONLine writes v as one line of JSON (a stream of events).
func WriteJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// TerminalText is agent-written text made safe to print on a terminal:
// control characters (escape sequences' introducers, BEL, C1) removed.
func TerminalText(s string) string { return deliver.Sanitize(s) }
