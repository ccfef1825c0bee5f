package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// show prints v as JSON with --json, else the line of format.
func (f *Factory) show(v any, format string, a ...any) error {
	if f.JSON {
		writeJSON(f.IO.Out, v)
		return nil
	}
	_, err := fmt.Fprintf(f.IO.Out, format+"\n", a...)
	return err
}

// table prints aligned columns.
type table struct{ w *tabwriter.Writer }

func newTable(out io.Writer, header ...string) *table {
	t := &table{w: tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) { fmt.Fprintln(t.w, strings.Join(cells, "\t")) }

func (t *table) flush() error { return t.w.Flush() }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
