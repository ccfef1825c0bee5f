package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/termsafe"
)

// run runs command c with opts: runF when a test gave one, else do.
func run[O any](c *cobra.Command, f *Factory, opts *O, runF func(context.Context, *O) error, do func(context.Context, *Factory, *O) error) error {
	if runF != nil {
		return runF(c.Context(), opts)
	}
	return do(c.Context(), f, opts)
}

// show returns err, the operation's, else prints v as JSON with --json,
// else the line of format, terminal-safe (termsafe.Text: the values may
// hold what agents wrote).
func (f *Factory) show(err error, v any, format string, a ...any) error {
	if err != nil {
		return err
	}
	if f.JSON {
		writeJSON(f.IO.Out, v)
		return nil
	}
	_, err = fmt.Fprintln(f.IO.Out, termsafe.Text(fmt.Sprintf(format, a...)))
	return err
}

// showTable returns err, else prints v as JSON with --json, else rows in
// aligned columns under header.
func (f *Factory) showTable(err error, v any, header []string, rows [][]string) error {
	if err != nil || f.JSON {
		return f.show(err, v, "")
	}
	return termsafe.WriteTable(f.IO.Out, header, rows)
}

// showRows returns err, else prints v as JSON with --json (nil: items, [] for
// none), else the rows of items in aligned columns under header.
func showRows[T interface{ Row() []string }](f *Factory, err error, v any, items []T, header ...string) error {
	if v == nil {
		v = nonNil(items)
	}
	return f.showTable(err, v, header, termsafe.Rows(items))
}

// showLines returns err, else prints v as JSON with --json (nil: items, []
// for none), else each of items on a line.
func showLines[T fmt.Stringer](f *Factory, err error, v any, items []T) error {
	if err != nil || f.JSON {
		if v == nil {
			v = nonNil(items)
		}
		return f.show(err, v, "")
	}
	for _, it := range items {
		fmt.Fprintln(f.IO.Out, termsafe.Text(it.String()))
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// messageText is the text of a message: TEXT as given, or stdin for "-".
func messageText(f *Factory, text string) (string, error) {
	if text != "-" {
		return text, nil
	}
	b, err := io.ReadAll(f.IO.In)
	if err != nil {
		return "", fmt.Errorf("read stdin: %w", err)
	}
	return string(b), nil
}

// durationVar defines a duration flag read by config.ParseDuration (500ms,
// 2s, or milliseconds). With key, the value is also checked against that
// config key's bounds (talk --timeout against defaults.timeout).
func durationVar(fl *pflag.FlagSet, p *time.Duration, name string, value time.Duration, key, usage string) {
	*p = value
	fl.Var(&durationValue{p: p, name: "--" + name, key: key}, name, usage)
}

type durationValue struct {
	p         *time.Duration
	name, key string
}

func (v *durationValue) Set(s string) error {
	d, err := party.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%s: %w", v.name, err)
	}
	if v.key != "" {
		if err := party.CheckFlag(v.name, v.key, d); err != nil {
			return err // it names the flag
		}
	}
	*v.p = d
	return nil
}

func (v *durationValue) String() string {
	if *v.p == 0 {
		return "0" // what pflag takes for a zero default, and leaves out of the help
	}
	return v.p.String()
}

func (v *durationValue) Type() string { return "duration" }
