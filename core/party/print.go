package party

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/partyhq/party/core/termsafe"
)

// WriteJSON writes v as party's --json prints it: indented, with <, > and
// & as they are, and DEL and the C1 controls as \u escapes
// (termsafe.JSON), so every text is exact for a JSON reader and nothing
// in it acts on a terminal.
func WriteJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(termsafe.JSON(b.Bytes()))
	return err
}

// WriteTable writes rows in aligned columns under header, as party's
// listings print them, terminal-safe (termsafe.Text).
func WriteTable(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, termsafe.Text(strings.Join(header, "\t")))
	for _, r := range rows {
		fmt.Fprintln(tw, termsafe.Text(strings.Join(r, "\t")))
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

// WriteJSONLine writes v as one line of JSON (a stream of events), its
// C1 and DEL escaped as WriteJSON does.
func WriteJSONLine(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(termsafe.JSON(b.Bytes()))
	return err
}

// TerminalText is agent-written text made safe to print on a terminal
// (termsafe.Text).
func TerminalText(s string) string { return termsafe.Text(s) }
