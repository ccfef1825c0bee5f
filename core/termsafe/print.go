package termsafe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes v as party's --json prints it: indented, with <, > and
// & as they are, and DEL and the C1 controls as \u escapes
// (JSON), so every text is exact for a JSON reader and nothing
// in it acts on a terminal.
func WriteJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(JSON(b.Bytes()))
	return err
}

// WriteTable writes rows in aligned columns under header, as party's
// listings print them, terminal-safe (Text).
func WriteTable(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, Text(strings.Join(header, "\t")))
	for _, r := range rows {
		fmt.Fprintln(tw, Text(strings.Join(r, "\t")))
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
	_, err := w.Write(JSON(b.Bytes()))
	return err
}
